import type { ServiceImpl } from "@connectrpc/connect";
import type { SendingGuard } from "../../../capabilities/deliverability/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { operatorAuditOf } from "../context.ts";

/**
 * AdminService handler of the deliverability guard: an operator lifts a
 * company's suspension (audited). The company reads its state through the
 * SendingStatusService.
 */
export type SendingGuardAdmin = Pick<ServiceImpl<typeof AdminService>, "liftSendingSuspension">;

export function sendingGuardAdmin(guard: SendingGuard): SendingGuardAdmin {
  return {
    async liftSendingSuspension(req, ctx) {
      return guard.lift({ companyId: req.companyId, reason: req.reason, audit: operatorAuditOf(ctx) });
    },
  };
}
