import type { DescField } from "@bufbuild/protobuf";
import { SendMessageRequestSchema } from "../gen/mail/v1/mail_pb.js";
import { fieldRulesOf, maxLengthOf } from "./field-rules.ts";

/**
 * Names and limits of the public HTTP conventions that are not fields of
 * any message, written once: the transports, the capabilities and the
 * OpenAPI document import them from here. Header names are in lower case,
 * the form HTTP/2, gRPC metadata and `Headers` objects use (HTTP/1.1 header
 * names are case-insensitive, so the documented `Idempotency-Key` is this).
 */

/** Request header of a POST's idempotency key (gRPC: metadata of the same name). */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
/** The same header as the spec spells it: the name in VALIDATION_ERROR problems and in messages. */
export const IDEMPOTENCY_KEY_HEADER_NAME = "Idempotency-Key";
/** Answer header of a replayed answer: `Idempotent-Replayed: true`. */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed";
/**
 * Answer header of a replay whose first answer held secrets, which are never
 * kept (fields marked `debug_redact` in the contract): their JSON names,
 * comma-separated, e.g. `Idempotent-Redacted: secret`.
 */
export const IDEMPOTENT_REDACTED_HEADER = "idempotent-redacted";
/** Every answer carries one; a sane incoming value is echoed. */
export const REQUEST_ID_HEADER = "x-request-id";

/** The caller's budget for the current window: requests allowed. */
export const RATE_LIMIT_LIMIT_HEADER = "x-ratelimit-limit";
/** Requests left in the current window. */
export const RATE_LIMIT_REMAINING_HEADER = "x-ratelimit-remaining";
/** Seconds until the current window resets. */
export const RATE_LIMIT_RESET_HEADER = "x-ratelimit-reset";
/** Seconds to wait before retrying; on 429 answers. */
export const RETRY_AFTER_HEADER = "retry-after";
/** The three headers every authenticated answer carries (spec, Limits). */
export const RATE_LIMIT_HEADERS = [RATE_LIMIT_LIMIT_HEADER, RATE_LIMIT_REMAINING_HEADER, RATE_LIMIT_RESET_HEADER] as const;

/**
 * Spec, Limits: "Idempotency-Key header: at most 200 characters". The
 * header is no field of any message, so the limit is written here.
 */
export const IDEMPOTENCY_KEY_HEADER_MAX_LENGTH = 200;

/**
 * Spec, Limits: "send idempotency key: at most 160 characters". The
 * contract declares it on SendMessageRequest.idempotency_key (its
 * `string.max_len` rule); read from there.
 */
export const SEND_IDEMPOTENCY_KEY_MAX_LENGTH: number = contractMaxLength(SendMessageRequestSchema.field.idempotencyKey);

function contractMaxLength(field: DescField | undefined): number {
  const value = field ? maxLengthOf(fieldRulesOf(field)) : undefined;
  if (!value) throw new Error("contract: SendMessageRequest.idempotency_key has no string.max_len rule");
  return value;
}
