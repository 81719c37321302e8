/** What every response shares: the documented headers (once, in `components.headers`) and the status line. */
import { STATUS_CODES } from "node:http";
import type { JsonObject } from "./types.ts";

const H_REQUEST_ID = "X-Request-Id";
const H_RL_LIMIT = "x-ratelimit-limit";
const H_RL_REMAINING = "x-ratelimit-remaining";
const H_RL_RESET = "x-ratelimit-reset";
const H_RETRY_AFTER = "retry-after";
const H_REPLAYED = "Idempotent-Replayed";

export interface ResponseTraits {
  readonly authenticated: boolean;
  readonly status: number;
  /** A POST answer that the idempotency layer may replay. */
  readonly replayable: boolean;
}

/** The headers of one response, as `$ref`s to `components.headers`. */
export function responseHeaders(opts: ResponseTraits): JsonObject {
  const headers: JsonObject = { [H_REQUEST_ID]: headerRef(H_REQUEST_ID) };
  if (opts.authenticated) {
    headers[H_RL_LIMIT] = headerRef(H_RL_LIMIT);
    headers[H_RL_REMAINING] = headerRef(H_RL_REMAINING);
    headers[H_RL_RESET] = headerRef(H_RL_RESET);
  }
  if (opts.status === 429) headers[H_RETRY_AFTER] = headerRef(H_RETRY_AFTER);
  if (opts.replayable && opts.status < 300) headers[H_REPLAYED] = headerRef(H_REPLAYED);
  return headers;
}

export function headerComponents(): Record<string, JsonObject> {
  const rateLimitNote = "Present once the API key is known (rate limits are per key).";
  return {
    [H_REQUEST_ID]: {
      description: "Identifies the request in the service's logs; quote it when reporting a problem.",
      required: true,
      schema: { type: "string" },
    },
    [H_RL_LIMIT]: {
      description: `Requests allowed per minute for this key and operation. ${rateLimitNote}`,
      schema: { type: "integer", minimum: 0 },
    },
    [H_RL_REMAINING]: {
      description: `Requests left in the current window. ${rateLimitNote}`,
      schema: { type: "integer", minimum: 0 },
    },
    [H_RL_RESET]: {
      description: `Seconds until the current window resets. ${rateLimitNote}`,
      schema: { type: "integer", minimum: 0 },
    },
    [H_RETRY_AFTER]: {
      description: "Seconds to wait before retrying (with the same idempotency key).",
      required: true,
      schema: { type: "integer", minimum: 0 },
    },
    [H_REPLAYED]: {
      description: "`true` when the answer is the stored answer of an earlier call with the same Idempotency-Key.",
      schema: { type: "boolean" },
    },
  };
}

/** The standard text of an HTTP status, the `description` of a response. */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? `HTTP ${status}`;
}

function headerRef(name: string): JsonObject {
  return { $ref: `#/components/headers/${name}` };
}
