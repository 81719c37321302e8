import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { ValidationError } from "../../../contract/api-error.ts";
import type { ProviderEventsIntake } from "../../../capabilities/messages/lifecycle/provider-events.ts";
import type { ProviderEventType } from "../../../capabilities/messages/email-provider.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";

/** AdminService.ReportProviderEvent: delivery outcomes from the email service. */
export type ProviderEventsAdmin = Pick<ServiceImpl<typeof AdminService>, "reportProviderEvent">;

const TYPES: ReadonlySet<string> = new Set<ProviderEventType>(["delivered", "bounced", "complained"]);

export function providerEventsAdmin(intake: ProviderEventsIntake): ProviderEventsAdmin {
  return {
    async reportProviderEvent(req) {
      const problems = [];
      if (!req.providerEventId) problems.push({ field: "providerEventId", problem: "is required" });
      if (!req.providerMessageId) problems.push({ field: "providerMessageId", problem: "is required" });
      if (!TYPES.has(req.type)) problems.push({ field: "type", problem: "must be one of delivered, bounced, complained" });
      if (problems.length > 0) throw new ValidationError(problems);
      const result = await intake.report({
        providerEventId: req.providerEventId,
        providerMessageId: req.providerMessageId,
        type: req.type as ProviderEventType,
        occurredAt: req.occurredAt ? timestampDate(req.occurredAt) : new Date(),
        ...(req.detail ? { detail: req.detail } : {}),
      });
      return { applied: result.applied, messageId: result.messageId };
    },
  };
}
