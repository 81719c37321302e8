import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AuditActorKind as DomainActorKind, AuditEventRecord, AuditLog } from "../../../capabilities/audit/index.ts";
import { AuditActorKind, type AuditEvent, AuditEventSchema, AuditService } from "../../../gen/mail/v1/audit_pb.js";
import { callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

const ACTOR_KIND: Record<DomainActorKind, AuditActorKind> = {
  member: AuditActorKind.MEMBER,
  api_key: AuditActorKind.API_KEY,
  operator: AuditActorKind.OPERATOR,
};

function auditEventMessage(event: AuditEventRecord): AuditEvent {
  return create(AuditEventSchema, {
    id: event.id,
    occurredAt: optionalTimestamp(event.occurredAt),
    actorKind: ACTOR_KIND[event.actorKind],
    actor: event.actor,
    action: event.action,
    targetType: event.targetType,
    targetId: event.targetId,
    requestId: event.requestId,
    clientIp: event.clientIp,
    details: JSON.stringify(event.details),
  });
}

/** AuditService: reads the company's audit log (scope mail.admin). */
export function auditServiceImpl(audit: AuditLog): ServiceImpl<typeof AuditService> {
  return {
    async listAuditEvents(req, ctx) {
      const page = await audit.list({
        companyId: callerOf(ctx).companyId,
        limit: req.limit,
        cursor: req.cursor,
        filters: {
          ...(req.actor ? { actor: req.actor } : {}),
          ...(req.action ? { action: req.action } : {}),
          ...(req.since ? { since: timestampDate(req.since) } : {}),
        },
      });
      return { items: page.items.map(auditEventMessage), nextCursor: page.nextCursor };
    },
  };
}
