import { ValidationError } from "../../contract/api-error.ts";
import { IDEMPOTENCY_KEY_HEADER_MAX_LENGTH as IDEMPOTENCY_KEY_MAX_LENGTH, SEND_IDEMPOTENCY_KEY_MAX_LENGTH } from "../../contract/names.ts";

/** The field name used in VALIDATION_ERROR messages: the header as documented. */
const FIELD = "Idempotency-Key";
/** The JSON name of the body field (SendMessageRequest.idempotencyKey). */
const BODY_FIELD = "idempotencyKey";

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

/** A body key the request's own validation will accept (not blank, at most 160 characters, counted in code points). */
function isUsableBodyKey(key: string): boolean {
  // NUL: PostgreSQL text cannot hold it; the send's validation names the field.
  return key.trim() !== "" && [...key].length <= SEND_IDEMPOTENCY_KEY_MAX_LENGTH && !key.includes("\0");
}

/**
 * The one reading of a request's idempotency key: the `Idempotency-Key`
 * header, or the request's body field (`idempotencyKey` of a send, which
 * "may be sent in the header instead"). Both present and different: 400
 * VALIDATION_ERROR naming `idempotencyKey` (two keys cannot both name the
 * request). A body key the request's validation refuses (blank, too long)
 * is no key: the handler answers its 400, with every other problem of the
 * request, and nothing is recorded under it.
 */
export function readIdempotencyKey(header: string | null | undefined, bodyKey: string | undefined): string | undefined {
  const fromHeader = parseIdempotencyKey(header);
  if (bodyKey === undefined) return fromHeader;
  if (fromHeader !== undefined && bodyKey !== fromHeader) {
    throw new ValidationError([
      { field: BODY_FIELD, problem: `differs from the ${FIELD} header; send one key, or the same key in both` },
    ]);
  }
  return isUsableBodyKey(bodyKey) ? bodyKey : fromHeader;
}
