import { type HandlerContext, createContextKey } from "@connectrpc/connect";
import { auditActorOf, type Principal } from "../../capabilities/accounts/principal.ts";
import { OPERATOR_ACTOR, type AuditContext } from "../../capabilities/audit/types.ts";
import { REQUEST_ID_HEADER } from "../../contract/names.ts";
import { CLIENT_ADDRESS_HEADER } from "../http/request-context.ts";

/**
 * Values the interceptors resolve once per call and the handlers read.
 * `undefined` when the operation needs no principal (the handlers of such
 * operations never read it). The value is the call's Principal (an API key,
 * a member session, or an operator acting for a company); it keeps the
 * fields of an authenticated key, so handlers read `companyId` and
 * `scopes` whichever way the caller came in.
 */
export const kCaller = createContextKey<Principal | undefined>(undefined, { description: "the call's principal" });

/** The principal of an operation that requires one; the auth interceptor guarantees it. */
export function callerOf(ctx: HandlerContext): Principal {
  const caller = ctx.values.get(kCaller);
  if (!caller) throw new Error("operation requires a principal but none was resolved");
  return caller;
}

/** Who made a change and from where, for the audit log: the principal, the request id, the client address. */
export function auditContextOf(ctx: HandlerContext): AuditContext {
  return {
    actor: auditActorOf(callerOf(ctx)),
    requestId: ctx.requestHeader.get(REQUEST_ID_HEADER) ?? "",
    clientIp: ctx.requestHeader.get(CLIENT_ADDRESS_HEADER) ?? "",
  };
}

/** The audit context of an AdminService call: the operator, with the request id and client address. */
export function operatorAuditOf(ctx: HandlerContext): AuditContext {
  return {
    actor: OPERATOR_ACTOR,
    requestId: ctx.requestHeader.get(REQUEST_ID_HEADER) ?? "",
    clientIp: ctx.requestHeader.get(CLIENT_ADDRESS_HEADER) ?? "",
  };
}
