import { getOption } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { type ErrorCode, ErrorCodeSchema } from "./gen/mail/v1/errors_pb.js";
import { http_status } from "./gen/mail/v1/options_pb.js";

/**
 * The API's stable error codes (`VALIDATION_ERROR`, `INSUFFICIENT_CREDITS`,
 * ...), from the contract's mail.v1.ErrorCode. Branch on these; messages are
 * for people and may change.
 */
export type MailErrorCode = Exclude<keyof typeof ErrorCode, "UNSPECIFIED">;

/** The google.rpc.ErrorInfo domain in which the service names its code. */
export const ERROR_DOMAIN = "mail.v1";

const CODE_PREFIX = "ERROR_CODE_";

/**
 * The HTTP status of each code, as the contract declares it (the
 * `http_status` option of mail.v1.ErrorCode): the status the same error has
 * on the JSON HTTP API, so both clients see the same number.
 */
const HTTP_STATUS_OF_CODE: ReadonlyMap<string, number> = new Map(
  ErrorCodeSchema.values.filter((v) => v.number !== 0).map((v) => [v.name.slice(CODE_PREFIX.length), getOption(v, http_status)]),
);

/**
 * HTTP status of an error that carries no code of the contract (the network,
 * a proxy, a timeout), by its Connect code; the Connect protocol's own table
 * (https://connectrpc.com/docs/protocol#error-codes).
 */
const HTTP_STATUS_OF_CONNECT_CODE: Readonly<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

function isMailErrorCode(reason: string): reason is MailErrorCode {
  return HTTP_STATUS_OF_CODE.has(reason);
}

/** What the retrying layer knows about a failed call (src/retry.ts). */
export interface CallFacts {
  /** How many times the call was sent. */
  readonly attempts: number;
  /** The idempotency key every attempt carried, when the call had one. */
  readonly idempotencyKey?: string;
}

/**
 * An error answered by the mail API, or a call that could not reach it.
 *
 * - `code`: the API's code (`VALIDATION_ERROR`, `RATE_LIMITED`, ...), read
 *   from the google.rpc.ErrorInfo detail the service attaches (domain
 *   `mail.v1`); undefined when the answer carried none (the network, a
 *   proxy, the call's own timeout): then `connectCode` says what happened.
 * - `message`: the service's human-readable message.
 * - `status`: the HTTP status of the error (the one the JSON API answers).
 * - `requestId`: the service's `x-request-id`, under which its logs hold the details.
 * - `retryAfterSeconds`: the service's `retry-after`, when it sent one.
 * - `idempotencyKey`: the key the call carried (given, or generated for a
 *   write): calling again with it later can never do the work twice.
 * - `attempts`: how many times the call was sent (retries included).
 */
export class MailApiError extends Error {
  override readonly name = "MailApiError";
  readonly code: MailErrorCode | undefined;
  readonly status: number;
  readonly connectCode: Code;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly idempotencyKey: string | undefined;
  readonly attempts: number;
  /** Response headers and trailers of the error answer. */
  readonly metadata: Headers;

  constructor(cause: ConnectError, facts: CallFacts = { attempts: 1 }) {
    super(cause.rawMessage, { cause });
    const info = cause.findDetails(ErrorInfoSchema).find((d) => d.domain === ERROR_DOMAIN);
    this.code = info && isMailErrorCode(info.reason) ? info.reason : undefined;
    this.status = (this.code && HTTP_STATUS_OF_CODE.get(this.code)) || HTTP_STATUS_OF_CONNECT_CODE[cause.code];
    this.connectCode = cause.code;
    this.metadata = cause.metadata;
    this.requestId = cause.metadata.get("x-request-id") ?? undefined;
    this.retryAfterSeconds = parseRetryAfter(cause.metadata.get("retry-after"));
    this.idempotencyKey = facts.idempotencyKey;
    this.attempts = facts.attempts;
  }

  /**
   * The spec's retry guidance: 429 and 5xx are worth another try (with the
   * same idempotency key); every other error is the answer. 501 is left out:
   * an operation that is not built answers the same on every try.
   */
  get retryable(): boolean {
    if (this.connectCode === Code.Canceled) return false;
    return this.status === 429 || (this.status >= 500 && this.status !== 501);
  }
}

/** `retry-after` in seconds (the service sends whole seconds); undefined when absent or not a number. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}

/** A MailApiError for anything a call threw (Connect gives errors without an answer, like a refused connection, its own codes). */
export function toMailApiError(error: unknown, facts?: CallFacts): MailApiError {
  if (error instanceof MailApiError) return error;
  return new MailApiError(ConnectError.from(error), facts);
}
