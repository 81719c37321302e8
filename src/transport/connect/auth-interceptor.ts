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
import type { ApiKeyAuthenticator, AuthenticatedKey } from "../../capabilities/accounts/types.ts";
import type { RateLimitDecision, RateLimiter } from "../../capabilities/rate-limit/types.ts";
import { boundedApiError } from "../bounded-errors.ts";
import { CLIENT_ADDRESS_HEADER } from "../http/request-context.ts";
import { kCaller } from "./context.ts";
import { FailedAuthentications } from "./failed-authentications.ts";

export interface AuthOptions {
  readonly authenticator: ApiKeyAuthenticator;
  readonly rateLimiter: RateLimiter;
  /** Requests per minute per key for operations without their own limit. */
  readonly defaultRequestsPerMinute: number;
  /** Bearer token of the AdminService; undefined disables it. */
  readonly operatorToken: string | undefined;
  /** Refused keys and tokens per client address (one per process; both listeners share it). */
  readonly failedAuthentications?: FailedAuthentications;
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
  /** The API key behind the call; undefined for public and operator calls. */
  readonly caller: AuthenticatedKey | undefined;
  /** Headers every answer to the call carries, errors included (the rate-limit headers). */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Decides whether a call to `method` with these request headers may run.
 * Throws the refusal as an ApiError carrying its answer headers.
 */
export type Authorize = (method: DescMethod, header: Headers) => Promise<Authorization>;

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
 * The Connect interceptor below runs it for every call; the REST bridge
 * runs it itself for a request it refuses before calling the RPC (malformed
 * or invalid body), so that authentication still comes first there.
 */
export function createAuthorizer(options: AuthOptions): Authorize {
  const failures = options.failedAuthentications ?? new FailedAuthentications();

  /** Refuses an address over its failure budget, and counts this attempt's refusal. */
  async function guarded<T>(header: Headers, attempt: () => Promise<T> | T): Promise<T> {
    const address = header.get(CLIENT_ADDRESS_HEADER) ?? "";
    const wait = failures.retryAfterSeconds(address);
    if (wait > 0) {
      throw new ApiError(
        "RATE_LIMITED",
        `Too many failed authentications from this address. Retry after ${wait} s.`,
        { [RETRY_AFTER_HEADER]: String(wait) },
      );
    }
    try {
      return await attempt();
    } catch (error) {
      const code = apiErrorFrom(error)?.code;
      if (code === "API_KEY_INVALID" || code === "API_KEY_EXPIRED" || code === "FORBIDDEN") failures.recordFailure(address);
      throw error;
    }
  }

  return async (method, header) => {
    const access = operationSpec(method).access;
    const token = bearerToken(header.get("authorization"));

    switch (access.kind) {
      case "undeclared":
        // A contract mistake: logged by the errors interceptor, answered INTERNAL_ERROR.
        throw new Error(`contract: ${method.parent.typeName}.${method.name} ${access.reason}; refusing to serve it`);
      case "public":
        return { caller: undefined, headers: {} };
      case "operator":
        if (!token) throw new ApiError("AUTHENTICATION_REQUIRED", "The AdminService needs the operator token as a bearer token.");
        await guarded(header, () => {
          if (!options.operatorToken || !sameSecret(token, options.operatorToken)) {
            throw new ApiError("FORBIDDEN", "The operator token is not valid.");
          }
        });
        return { caller: undefined, headers: {} };
      case "key":
        break;
    }

    if (!token) {
      throw new ApiError("AUTHENTICATION_REQUIRED", "Send an API key as `Authorization: Bearer <API_KEY>`.");
    }
    const caller: AuthenticatedKey = await guarded(header, () => options.authenticator.authenticate(token));

    const spec = operationSpec(method);
    const limit = spec.rateLimitPerMinute || options.defaultRequestsPerMinute;
    const bucket = `${caller.keyId}:${spec.rateLimitPerMinute ? method.name : "default"}`;
    const decision = await options.rateLimiter.consume(bucket, limit);
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      throw new ApiError("RATE_LIMITED", `Too many requests: at most ${limit} per minute for this key. Retry after ${decision.retryAfterSeconds} s.`, headers);
    }
    if (!caller.entitlements.api) {
      throw new ApiError("FEATURE_NOT_ENTITLED", "The mail API is not enabled for this company.", headers);
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
    const { caller, headers } = await authorize(req.method, req.header);
    if (caller) req.contextValues.set(kCaller, caller);
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
