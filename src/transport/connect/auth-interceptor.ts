import { timingSafeEqual, createHash } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { ApiError } from "../../contract/api-error.ts";
import { operationSpec } from "../../contract/routes.ts";
import { AdminService } from "../../gen/mail/v1/admin_pb.js";
import type { ApiKeyAuthenticator, AuthenticatedKey } from "../../capabilities/accounts/types.ts";
import type { RateLimitDecision, RateLimiter } from "../../capabilities/rate-limit/types.ts";
import { kCaller } from "./context.ts";

export interface AuthOptions {
  readonly authenticator: ApiKeyAuthenticator;
  readonly rateLimiter: RateLimiter;
  /** Requests per minute per key for operations without their own limit. */
  readonly defaultRequestsPerMinute: number;
  /** Bearer token of the AdminService; undefined disables it. */
  readonly operatorToken: string | undefined;
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
    "x-ratelimit-limit": String(decision.limit),
    "x-ratelimit-remaining": String(decision.remaining),
    "x-ratelimit-reset": String(decision.resetSeconds),
  };
  if (!decision.allowed) headers["retry-after"] = String(decision.retryAfterSeconds);
  return headers;
}

/**
 * Authentication, rate limiting and authorization, driven by the contract:
 * the scope an operation needs and its rate limit are options of the RPC.
 * Order: the key is resolved (401), its budget is taken (429; every
 * authenticated answer carries the rate-limit headers, errors included),
 * then the company's entitlement (403 FEATURE_NOT_ENTITLED) and the key's
 * scope (403 FORBIDDEN) are checked.
 */
export function authInterceptor(options: AuthOptions): Interceptor {
  return (next) => async (req) => {
    const token = bearerToken(req.header.get("authorization"));

    if (req.service.typeName === AdminService.typeName) {
      if (!token) throw new ApiError("AUTHENTICATION_REQUIRED", "The AdminService needs the operator token as a bearer token.");
      if (!options.operatorToken || !sameSecret(token, options.operatorToken)) {
        throw new ApiError("FORBIDDEN", "The operator token is not valid.");
      }
      return next(req);
    }

    const spec = operationSpec(req.method);
    if (!spec.scope) return next(req);

    if (!token) {
      throw new ApiError("AUTHENTICATION_REQUIRED", "Send an API key as `Authorization: Bearer <API_KEY>`.");
    }
    const caller: AuthenticatedKey = await options.authenticator.authenticate(token);

    const limit = spec.rateLimitPerMinute || options.defaultRequestsPerMinute;
    const bucket = `${caller.keyId}:${spec.rateLimitPerMinute ? req.method.name : "default"}`;
    const decision = await options.rateLimiter.consume(bucket, limit);
    const headers = rateLimitHeaders(decision);
    try {
      if (!decision.allowed) {
        throw new ApiError("RATE_LIMITED", `Too many requests: at most ${limit} per minute for this key. Retry after ${decision.retryAfterSeconds} s.`);
      }
      if (!caller.entitlements.api) {
        throw new ApiError("FEATURE_NOT_ENTITLED", "The mail API is not enabled for this company.");
      }
      if (!caller.scopes.includes(spec.scope)) {
        throw new ApiError("FORBIDDEN", `This API key lacks the scope ${spec.scope}.`);
      }
      req.contextValues.set(kCaller, caller);
      const res = await next(req);
      for (const [name, value] of Object.entries(headers)) res.header.set(name, value);
      return res;
    } catch (error) {
      // The rate-limit headers travel with every authenticated answer.
      if (error instanceof ApiError) throw new ApiError(error.code, error.message, { ...error.headers, ...headers });
      throw error;
    }
  };
}
