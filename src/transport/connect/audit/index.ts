import type { ServiceImpl } from "@connectrpc/connect";
import type { AuditLog } from "../../../capabilities/audit/index.ts";
import type { AuditService } from "../../../gen/mail/v1/audit_pb.js";
import { listAuditEventsCommand, listAuditEventsResponse } from "./mapping.ts";

/** AuditService: reads the company's audit log (scope mail.admin). */
export function auditServiceImpl(audit: AuditLog): ServiceImpl<typeof AuditService> {
  return {
    async listAuditEvents(req, ctx) {
      return listAuditEventsResponse(await audit.list(listAuditEventsCommand(req, ctx)));
    },
  };
}
