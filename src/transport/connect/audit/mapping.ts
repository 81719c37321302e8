import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { AuditActorKind as DomainActorKind, AuditEventRecord, ListAuditEventsCommand, ListAuditEventsResult } from "../../../capabilities/audit/index.ts";
import {
  AuditActorKind,
  type AuditEvent,
  AuditEventSchema,
  type ListAuditEventsRequest,
  type ListAuditEventsResponseSchema,
} from "../../../gen/mail/v1/audit_pb.js";
import { callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/** The AuditService's proto <-> domain mapping, both directions. */

const ACTOR_KIND: Record<DomainActorKind, AuditActorKind> = {
  member: AuditActorKind.MEMBER,
  api_key: AuditActorKind.API_KEY,
  operator: AuditActorKind.OPERATOR,
  system: AuditActorKind.SYSTEM,
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

export function listAuditEventsCommand(req: ListAuditEventsRequest, ctx: HandlerContext): ListAuditEventsCommand {
  return {
    companyId: callerOf(ctx).companyId,
    limit: req.limit,
    cursor: req.cursor,
    filters: {
      ...(req.actor ? { actor: req.actor } : {}),
      ...(req.action ? { action: req.action } : {}),
      ...(req.since ? { since: timestampDate(req.since) } : {}),
    },
  };
}

export function listAuditEventsResponse(page: ListAuditEventsResult): MessageInitShape<typeof ListAuditEventsResponseSchema> {
  return { items: page.items.map(auditEventMessage), nextCursor: page.nextCursor ?? undefined };
}
