import { ValidationError } from "../../contract/api-error.ts";

/** Spec, Limits: "Idempotency-Key header: at most 200 characters". */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

/** The field name used in VALIDATION_ERROR messages: the header as documented. */
const FIELD = "Idempotency-Key";

/**
 * Validates the raw header value: undefined when the header is absent,
 * the key when it is 1..200 printable ASCII characters, else a 400
 * VALIDATION_ERROR naming the header. A present but empty header is an
 * error rather than "no key": the caller meant to send one.
 */
export function parseIdempotencyKey(raw: string | null | undefined): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (raw.length < 1 || raw.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new ValidationError([{ field: FIELD, problem: `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, got ${raw.length}` }]);
  }
  if (!/^[\x20-\x7e]+$/.test(raw)) {
    throw new ValidationError([{ field: FIELD, problem: "must contain printable ASCII characters only" }]);
  }
  return raw;
}
