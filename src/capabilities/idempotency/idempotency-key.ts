import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import {
  IDEMPOTENCY_KEY_HEADER_MAX_LENGTH,
  IDEMPOTENCY_KEY_HEADER_NAME,
  SEND_IDEMPOTENCY_KEY_MAX_LENGTH,
} from "../../contract/names.ts";

/**
 * The one reading and validation of a request's idempotency key, done once
 * into a branded value: code further in takes an `IdempotencyKey` and never
 * reads or checks the raw value again.
 *
 * - every POST but a send: the `Idempotency-Key` header only
 *   (parseIdempotencyKey), for the idempotency wrapper
 *   (src/transport/connect/idempotency-interceptor.ts);
 * - a send (POST /mail/v1/send): the header or the body's `idempotencyKey`
 *   (readSendKey, in the send's validation), for the message, whose key is
 *   the only mechanism of a send (spec, Idempotency rule 4; the wrapper
 *   steps aside).
 */
declare const validated: unique symbol;
export type IdempotencyKey = string & { readonly [validated]: "IdempotencyKey" };

/** The JSON name of the send's body field (SendMessageRequest.idempotencyKey). */
const BODY_FIELD = "idempotencyKey";
const NO_NUL = "must not contain NUL characters";

/** Problems of a raw header value (1..200 printable ASCII characters); none when absent. */
function headerProblems(raw: string | null | undefined): FieldProblem[] {
  if (raw === null || raw === undefined) return [];
  if (raw.length < 1 || raw.length > IDEMPOTENCY_KEY_HEADER_MAX_LENGTH) {
    return [{ field: IDEMPOTENCY_KEY_HEADER_NAME, problem: `must be 1 to ${IDEMPOTENCY_KEY_HEADER_MAX_LENGTH} characters, got ${raw.length}` }];
  }
  if (!/^[\x20-\x7e]+$/.test(raw)) return [{ field: IDEMPOTENCY_KEY_HEADER_NAME, problem: "must contain printable ASCII characters only" }];
  return [];
}

/** Problems of a send's body key: not blank, at most 160 characters (code points), no NUL (PostgreSQL text cannot hold it). */
function bodyKeyProblems(key: string | undefined): FieldProblem[] {
  if (key === undefined) return [];
  if (key.trim() === "") return [{ field: BODY_FIELD, problem: "must not be empty" }];
  if ([...key].length > SEND_IDEMPOTENCY_KEY_MAX_LENGTH) return [{ field: BODY_FIELD, problem: `must be at most ${SEND_IDEMPOTENCY_KEY_MAX_LENGTH} characters` }];
  if (key.includes("\0")) return [{ field: BODY_FIELD, problem: NO_NUL }];
  return [];
}

/**
 * The `Idempotency-Key` header of a POST: undefined when absent, the key
 * when valid, else a 400 VALIDATION_ERROR naming the header. A present but
 * empty header is an error rather than "no key": the caller meant to send one.
 */
export function parseIdempotencyKey(raw: string | null | undefined): IdempotencyKey | undefined {
  const problems = headerProblems(raw);
  if (problems.length > 0) throw new ValidationError(problems);
  return raw === null || raw === undefined ? undefined : (raw as IdempotencyKey);
}

/** A send's key as read: the key, or the problems the send's one VALIDATION_ERROR lists with its other fields. */
export interface SendKey {
  readonly key?: IdempotencyKey;
  readonly problems: readonly FieldProblem[];
}

const NO_SEND_KEY: SendKey = { problems: [] };

/**
 * The key of a send: the `Idempotency-Key` header or the body's
 * `idempotencyKey` ("may be sent in the header instead"); both only when
 * equal. Problems are not thrown here: the send's validation reports them
 * with every other bad field of the request, in one answer.
 */
export function readSendKey(header: string | null | undefined, bodyKey: string | undefined): SendKey {
  const problems = [...bodyKeyProblems(bodyKey), ...headerProblems(header)];
  if (problems.length > 0) return { problems };
  const fromHeader = header ?? undefined;
  if (bodyKey !== undefined && fromHeader !== undefined && bodyKey !== fromHeader) {
    return {
      problems: [{ field: BODY_FIELD, problem: `differs from the ${IDEMPOTENCY_KEY_HEADER_NAME} header; send one key, or the same key in both` }],
    };
  }
  const key = bodyKey ?? fromHeader;
  return key === undefined ? NO_SEND_KEY : { key: key as IdempotencyKey, problems: [] };
}
