import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  AddSuppressionCommand,
  ListSuppressionsCommand,
  RemoveSuppressionCommand,
  SuppressionEntry,
  SuppressionQuery,
  SuppressionReason as DomainReason,
} from "../../../capabilities/suppressions/index.ts";
import {
  type AddSuppressionRequest,
  type GetSuppressionRequest,
  type ListSuppressionsRequest,
  type RemoveSuppressionRequest,
  type Suppression,
  SuppressionReason,
  SuppressionReasonSchema,
  SuppressionSchema,
} from "../../../gen/mail/v1/suppressions_pb.js";
import { enumFilterOf } from "../enum-filters.ts";
import { auditContextOf, callerOf } from "../context.ts";

/** The SuppressionsService's proto <-> domain mapping, both directions; the company is the caller's. */

const TO_PROTO: Record<DomainReason, SuppressionReason> = {
  bounce: SuppressionReason.BOUNCE,
  complaint: SuppressionReason.COMPLAINT,
  manual: SuppressionReason.MANUAL,
};

export function suppressionMessage(entry: SuppressionEntry): Suppression {
  return create(SuppressionSchema, {
    email: entry.email,
    reason: TO_PROTO[entry.reason],
    messageId: entry.messageId ?? undefined,
    createdAt: timestampFromDate(entry.createdAt),
  });
}

export function listSuppressionsCommand(req: ListSuppressionsRequest, ctx: HandlerContext): ListSuppressionsCommand {
  return {
    companyId: callerOf(ctx).companyId,
    limit: req.limit,
    cursor: req.cursor,
    q: req.q,
    reason: enumFilterOf<DomainReason>(SuppressionReasonSchema, req.reason),
    since: req.since ? timestampDate(req.since) : undefined,
    until: req.until ? timestampDate(req.until) : undefined,
  };
}

export function suppressionQuery(req: GetSuppressionRequest, ctx: HandlerContext): SuppressionQuery {
  return { companyId: callerOf(ctx).companyId, email: req.email };
}

export function addSuppressionCommand(req: AddSuppressionRequest, ctx: HandlerContext): AddSuppressionCommand {
  return { companyId: callerOf(ctx).companyId, email: req.email, audit: auditContextOf(ctx) };
}

export function removeSuppressionCommand(req: RemoveSuppressionRequest, ctx: HandlerContext): RemoveSuppressionCommand {
  const caller = callerOf(ctx);
  return { companyId: caller.companyId, email: req.email, reason: req.reason, actor: caller.actor, audit: auditContextOf(ctx) };
}
