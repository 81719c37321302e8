import type { ServiceImpl } from "@connectrpc/connect";
import type { ProviderEventsIntake } from "../../../capabilities/messages/lifecycle/provider-events.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { providerEventOf } from "./mapping.ts";

/** AdminService.ReportProviderEvent: delivery outcomes from the email service. */
export type ProviderEventsAdmin = Pick<ServiceImpl<typeof AdminService>, "reportProviderEvent">;

export function providerEventsAdmin(intake: ProviderEventsIntake): ProviderEventsAdmin {
  return {
    async reportProviderEvent(req) {
      const result = await intake.report(providerEventOf(req));
      return { applied: result.applied, messageId: result.messageId };
    },
  };
}
