import { timingSafeEqual, createHash } from "node:crypto";
import type { DescMethod } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";
import {
  RATE_LIMIT_LIMIT_HEADER,
  RATE_LIMIT_REMAINING_HEADER,
  RATE_LIMIT_RESET_HEADER,
  RETRY_AFTER_HEADER,
} from "../../contract/names.ts";
import { operationSpec } from "../../contract/routes.ts";
import type { ApiKeyAuthenticator, CompanyEntitlements } from "../../capabilities/accounts/types.ts";
import type { Principal } from "../../capabilities/accounts/principal.ts";
import { API_KEY_SCOPES } from "../../capabilities/accounts/scopes.ts";
import { scopesOfRole } from "../../capabilities/members/roles.ts";
import type { SessionRecord } from "../../capabilities/members/types.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../../contract/names.ts";
import type { RateLimitDecision, RateLimiter } from "../../capabilities/rate-limit/types.ts";
import { boundedApiError } from "../bounded-errors.ts";
import { CLIENT_ADDRESS_HEADER } from "../http/request-context.ts";
import { MembersService } from "../../gen/mail/v1/members_pb.js";
import { SessionService } from "../../gen/mail/v1/sessions_pb.js";
import { kCaller } from "./context.ts";
import { FailedAuthentications } from "../http/failed-authentications.ts";
import { checkBrowserCall, COMPANY_HEADER, sessionCookieValue } from "./session-cookie.ts";

/** The services that manage a company's people, open to its sessions whatever its plan. */
const PEOPLE_SERVICES: ReadonlySet<string> = new Set([MembersService.typeName, SessionService.typeName]);

/** Resolves a session cookie's value to a live session (the members capability's Sessions). */
export interface SessionAuthenticator {
  authenticate(secret: string): Promise<SessionRecord | undefined>;
}

/** A company an operator names (x-mail-company-id); undefined when there is none. */
export type CompanyLookup = (companyId: string) => Promise<{ id: string; name: string; entitlements: CompanyEntitlements } | undefined>;

export interface AuthOptions {
  readonly authenticator: ApiKeyAuthenticator;
  readonly rateLimiter: RateLimiter;
  /** Requests per minute per key for operations without their own limit. */
  readonly defaultRequestsPerMinute: number;
  /** Bearer token of the AdminService; undefined disables it. */
  readonly operatorToken: string | undefined;
  /** Refused keys and tokens per client address (one per process; both listeners share it). */
  readonly failedAuthentications?: FailedAuthentications;
  /** Member sessions (the cookie door); without it the cookie is ignored. */
  readonly sessions?: SessionAuthenticator;
  /** The operator listener: operators act for the company named by x-mail-company-id. */
  readonly companies?: CompanyLookup;
  /** Which listener this authorizer guards (default public). */
  readonly listener?: "public" | "operator";
  /** Origins a session call may come from besides the request's own Host (PUBLIC_BASE_URL's). */
  readonly allowedOrigins?: readonly string[];
}

function bearerToken(header: string | null): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Compares two secrets in constant time (hashing first equalises lengths). */
function sameSecret(presented: string, expected: string): boolean {
  return timingSafeEqual(sha256(presented), sha256(expected));
}

export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    [RATE_LIMIT_LIMIT_HEADER]: String(decision.limit),
    [RATE_LIMIT_REMAINING_HEADER]: String(decision.remaining),
    [RATE_LIMIT_RESET_HEADER]: String(decision.resetSeconds),
  };
  if (!decision.allowed) headers[RETRY_AFTER_HEADER] = String(decision.retryAfterSeconds);
  return headers;
}

/** The outcome of letting one call in. */
export interface Authorization {
  /** Who is behind the call (key, member session, operator for a company); undefined for public and AdminService calls. */
  readonly caller: Principal | undefined;
  /** Headers every answer to the call carries, errors included (the rate-limit headers). */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Decides whether a call to `method` with these request headers may run.
 * Throws the refusal as an ApiError carrying its answer headers.
 */
export type Authorize = (method: DescMethod, header: Headers, requestMethod?: string) => Promise<Authorization>;

/**
 * Authentication, rate limiting and authorization, driven by the contract:
 * who may call an operation and its rate limit are options of the RPC
 * (src/contract/routes.ts, Access). Order: an address that failed too many
 * authentications is refused before any lookup (429); the key is resolved
 * (401); its budget is taken (429; every authenticated answer carries the
 * rate-limit headers, errors included); then the company's entitlement
 * (403 FEATURE_NOT_ENTITLED) and the key's scope (403 FORBIDDEN) are checked.
 * An operation whose contract declares no access is never served.
 *
 * The one principal step: a company RPC (`required_scope`) is
 * let in for one Principal, made from an API key (its scopes; refused by a
 * `refuse_api_keys` service), a member session cookie (the browser rules of
 * session-cookie.ts first; scopes from the role; public listener only), or
 * the operator token with x-mail-company-id (operator listener only).
 * `member_session` RPCs take the session only. A bearer token wins over a
 * cookie. Failed keys, tokens and session cookies count against the address.
 *
 * The Connect interceptor below runs it for every call; the REST bridge
 * runs it itself for a request it refuses before calling the RPC (malformed
 * or invalid body), so that authentication still comes first there.
 */
export function createAuthorizer(options: AuthOptions): Authorize {
  const failures = options.failedAuthentications ?? new FailedAuthentications();

  /** Refuses an address over its failure budget, and counts this attempt's refusal. */
  async function guarded<T>(header: Headers, attempt: () => Promise<T> | T): Promise<T> {
    const address = header.get(CLIENT_ADDRESS_HEADER) ?? "";
    const refused = failures.refusal(address);
    if (refused) throw refused;
    try {
      return await attempt();
    } catch (error) {
      const code = apiErrorFrom(error)?.code;
      // AUTHENTICATION_REQUIRED is thrown in here only for a presented session cookie that names no live session.
      if (code === "API_KEY_INVALID" || code === "API_KEY_EXPIRED" || code === "FORBIDDEN" || code === "AUTHENTICATION_REQUIRED") {
        failures.recordFailure(address);
      }
      throw error;
    }
  }

  const listener = options.listener ?? "public";
  const allowedOrigins = options.allowedOrigins ?? [];

  /** The operator token, compared in constant time; refusals count against the address. */
  async function requireOperator(header: Headers, token: string | undefined, service: string): Promise<void> {
    if (!token) throw new ApiError("AUTHENTICATION_REQUIRED", `The ${service} needs the operator token as a bearer token.`);
    await guarded(header, () => {
      if (!options.operatorToken || !sameSecret(token, options.operatorToken)) {
        throw new ApiError("FORBIDDEN", "The operator token is not valid.");
      }
    });
  }

  /**
   * The member session behind the cookie, under the browser rules; 401 when
   * there is none. A company without the mail API (the entitlement `api`)
   * keeps its screen for reading and for its own people (members, the
   * session door); any other change answers 403 FEATURE_NOT_ENTITLED, so
   * nothing is set up to send.
   */
  async function sessionPrincipal(header: Headers, requestMethod: string | undefined, cookie: string, method: DescMethod): Promise<Principal> {
    checkBrowserCall(header, requestMethod, allowedOrigins);
    const sessions = options.sessions;
    const session = await guarded(header, async () => {
      const found = sessions ? await sessions.authenticate(cookie) : undefined;
      if (!found) throw new ApiError("AUTHENTICATION_REQUIRED", "No valid session: sign in again with a sign-in link.");
      return found;
    });
    const { member, company } = session;
    if (!company.entitlements.api && !operationSpec(method).readsOnly && !PEOPLE_SERVICES.has(method.parent.typeName)) {
      throw new ApiError("FEATURE_NOT_ENTITLED", "The mail API is not enabled for this company: its screen reads, and changes nothing but its members.");
    }
    return {
      keyId: "",
      keyName: member.displayName || member.email,
      keyPrefix: member.email,
      scopes: scopesOfRole(member.role),
      expiresAt: session.expiresAt,
      companyId: company.id,
      companyName: company.name,
      entitlements: { api: company.entitlements.api, smtp: company.entitlements.smtp },
      actor: { kind: "member", memberId: member.id, email: member.email, role: member.role, sessionId: session.sessionId },
    };
  }

  /** An operator acting for the company named by x-mail-company-id (operator listener only). */
  async function operatorPrincipal(header: Headers, token: string | undefined): Promise<Principal> {
    await requireOperator(header, token, "company services on the operator listener");
    const companyId = header.get(COMPANY_HEADER)?.trim() ?? "";
    if (!companyId) throw new ApiError("VALIDATION_ERROR", `Name the company with the ${COMPANY_HEADER} header.`);
    const company = options.companies ? await options.companies(companyId) : undefined;
    if (!company) throw new ApiError("NOT_FOUND", "No such company.");
    return {
      keyId: "",
      keyName: "operator",
      keyPrefix: "operator",
      // Every scope but sending: sends are attributed to an API key (the operator has none).
      scopes: API_KEY_SCOPES.filter((scope) => scope !== "mail.transactional.send"),
      expiresAt: null,
      companyId: company.id,
      companyName: company.name,
      entitlements: { api: company.entitlements.api, smtp: company.entitlements.smtp },
      actor: { kind: "operator" },
    };
  }

  async function takeBudget(bucket: string, method: DescMethod): Promise<Record<string, string>> {
    const spec = operationSpec(method);
    const limit = spec.rateLimitPerMinute || options.defaultRequestsPerMinute;
    const decision = await options.rateLimiter.consume({ bucket: `${bucket}:${spec.rateLimitPerMinute ? method.name : "default"}`, limitPerMinute: limit });
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      throw new ApiError("RATE_LIMITED", `Too many requests: at most ${limit} per minute. Retry after ${decision.retryAfterSeconds} s.`, headers);
    }
    return headers;
  }

  return async (method, header, requestMethod) => {
    const access = operationSpec(method).access;
    const token = bearerToken(header.get("authorization"));
    const cookie = token ? undefined : sessionCookieValue(header.get("cookie"));

    switch (access.kind) {
      case "undeclared":
        // A contract mistake: logged by the errors interceptor, answered INTERNAL_ERROR.
        throw new Error(`contract: ${method.parent.typeName}.${method.name} ${access.reason}; refusing to serve it`);
      case "public":
        return { caller: undefined, headers: {} };
      case "operator":
        await requireOperator(header, token, "AdminService");
        return { caller: undefined, headers: {} };
      case "session": {
        if (listener !== "public" || cookie === undefined) {
          throw new ApiError("AUTHENTICATION_REQUIRED", "No valid session: sign in again with a sign-in link.");
        }
        const caller = await sessionPrincipal(header, requestMethod, cookie, method);
        return { caller, headers: await takeBudget(`member:${caller.actor.kind === "member" ? caller.actor.memberId : ""}`, method) };
      }
      case "key":
        break;
    }

    if (listener === "operator") {
      // Operators act for a company: every scope but sending, no rate limit, no entitlement check.
      return { caller: await operatorPrincipal(header, token), headers: {} };
    }

    if (cookie !== undefined) {
      const caller = await sessionPrincipal(header, requestMethod, cookie, method);
      const headers = await takeBudget(`member:${caller.actor.kind === "member" ? caller.actor.memberId : ""}`, method);
      if (!caller.scopes.includes(access.scope)) {
        throw new ApiError("FORBIDDEN", `Your role does not allow this (it needs ${access.scope}).`, headers);
      }
      return { caller, headers };
    }

    if (!token) {
      throw new ApiError("AUTHENTICATION_REQUIRED", "Send an API key as `Authorization: Bearer <API_KEY>`.");
    }
    const key = await guarded(header, () => options.authenticator.authenticate(token));
    const caller: Principal = { ...key, actor: { kind: "key" } };
    const headers = await takeBudget(caller.keyId, method);
    if (!caller.entitlements.api) {
      throw new ApiError("FEATURE_NOT_ENTITLED", "The mail API is not enabled for this company.", headers);
    }
    if (!access.apiKeys) {
      throw new ApiError("FORBIDDEN", "API keys cannot call this service (a member session of an owner or admin, or an operator, can).", headers);
    }
    if (!caller.scopes.includes(access.scope)) {
      throw new ApiError("FORBIDDEN", `This API key lacks the scope ${access.scope}.`, headers);
    }
    return { caller, headers };
  };
}

/**
 * Runs the authorizer for every call; the caller is handed to the handlers
 * (kCaller). Given options, it builds its own authorizer (tests do).
 */
export function authInterceptor(authorizer: Authorize | AuthOptions): Interceptor {
  const authorize = typeof authorizer === "function" ? authorizer : createAuthorizer(authorizer);
  return (next) => async (req) => {
    const { caller, headers } = await authorize(req.method, req.header, req.requestMethod);
    if (caller) req.contextValues.set(kCaller, caller);
    // Idempotency records belong to API keys; a session's or operator's call is answered without one.
    if (caller && caller.actor.kind !== "key") req.header.delete(IDEMPOTENCY_KEY_HEADER);
    try {
      const res = await next(req);
      for (const [name, value] of Object.entries(headers)) res.header.set(name, value);
      return res;
    } catch (error) {
      // The rate-limit headers travel with every authenticated answer.
      const known = apiErrorFrom(error);
      if (known && Object.keys(headers).length > 0) throw boundedApiError(known, headers);
      throw error;
    }
  };
}
