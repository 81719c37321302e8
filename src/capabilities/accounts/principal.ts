import type { AuditActor } from "../audit/types.ts";
import type { MemberRole } from "./member-roles.ts";
import { API_KEY_SCOPES } from "./scopes.ts";
import type { AuthenticatedKey } from "./types.ts";

/**
 * Who is behind a call, however it came in: an API key,
 * a member's session, or an operator acting for a named company. One auth
 * step (src/transport/connect/auth-interceptor.ts) makes it; handlers and
 * use cases read the company and the scopes and never ask which way in it
 * was, except to write the audit log (`actor`).
 *
 * It keeps the fields of AuthenticatedKey so that every handler written for
 * keys reads `companyId` and `scopes` unchanged. For a member or an
 * operator, `keyId` is empty and `keyName`/`keyPrefix` describe the actor.
 */
export type PrincipalActor =
  | { readonly kind: "key" }
  | { readonly kind: "member"; readonly memberId: string; readonly email: string; readonly role: MemberRole; readonly sessionId: string }
  | { readonly kind: "operator" };

export interface Principal extends AuthenticatedKey {
  readonly actor: PrincipalActor;
}

/** The audit log's name for a principal: a member's email, a key's prefix, or `operator`. */
export function auditActorOf(principal: Principal): AuditActor {
  switch (principal.actor.kind) {
    case "member":
      return { kind: "member", label: principal.actor.email };
    case "operator":
      return { kind: "operator", label: "operator" };
    case "key":
      return { kind: "api_key", label: principal.keyPrefix };
  }
}

/**
 * The one rule of which scopes a principal may put on a key, on every path
 * that yields a secret (creating a key, rotating one): an operator any scope
 * of the catalogue (`mailctl key create`); a member or a key only the scopes
 * it holds itself, so an administrator, who does not send, can never mint a
 * sending key.
 */
export function grantableScopes(principal: Principal): readonly string[] {
  return principal.actor.kind === "operator" ? API_KEY_SCOPES : principal.scopes;
}
