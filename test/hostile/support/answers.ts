import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ERROR_CODES, type ErrorCodeName, ERROR_DOMAIN } from "../../../src/contract/api-error.ts";
import { ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import type { RestAnswer } from "./hostile-api.ts";

/**
 * The verdict on one answer to a hostile request, the same for every suite:
 *
 * - never a server error: no 5xx, no INTERNAL, UNKNOWN or DATA_LOSS code
 *   (a 503 for a bad input is a 500 in disguise);
 * - never a stack trace, a source path or a driver's message in the answer;
 * - every error in the documented shape, `{ error: { code, message } }` and
 *   nothing else, with the HTTP status the contract declares for the code;
 * - every 400 (INVALID_ARGUMENT) a VALIDATION_ERROR (or the webhook
 *   host refusal) whose message names the field, as the caller wrote it.
 *
 * Problems are returned as text (empty: the answer is fine) so that a
 * property can report the request that broke it.
 */

/** Text that only leaks out of a server by mistake. */
const LEAKS: readonly RegExp[] = [
  /\n\s+at\s/, // a stack frame
  /\bat (?:async )?[\w.<>]+ \(/, // a stack frame on one line
  /(?:file:\/\/|\/work\/|node_modules|\.ts:\d+|\.js:\d+)/, // source paths
  /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|DriverException|QueryFailedError)\b/,
  /\b(?:syntax error at or near|invalid byte sequence|violates (?:not-null|unique|foreign key|check) constraint|relation "\w+")/i,
];

export function leaks(text: string): string | undefined {
  const found = LEAKS.find((pattern) => pattern.test(text));
  return found ? `the answer leaks internals (${found}): ${text.slice(0, 300)}` : undefined;
}

/**
 * Which field names a 400 of this request may name: the request message's
 * fields as the caller writes them (JSON names on REST, proto or JSON names
 * on gRPC), the keys the caller sent (an unknown one is named as written)
 * and, when the body as a whole is at fault, `body`.
 */
export interface FieldNames {
  readonly fields: ReadonlySet<string>;
  /** Keys the caller sent, at the top of the body or the query. */
  readonly sent: ReadonlySet<string>;
  /** Whether `body` (the body as a whole) may be named: only when it is not a JSON object. */
  readonly wholeBody: boolean;
  /**
   * Whether `headers` may be named: a request line near the service's 16 KiB
   * limit on the request head is refused as a whole, before any field is read
   * ("headers: larger than 16384 bytes in total.").
   */
  readonly oversizedHead?: boolean;
}

export function fieldNamesOf(
  desc: DescMessage,
  options: { door: "rest" | "grpc"; sent?: Iterable<string>; wholeBody?: boolean; oversizedHead?: boolean },
): FieldNames {
  const fields = new Set<string>();
  for (const field of desc.fields) {
    fields.add(field.jsonName);
    if (options.door === "grpc") fields.add(field.name);
  }
  return { fields, sent: new Set(options.sent ?? []), wholeBody: options.wholeBody ?? false, oversizedHead: options.oversizedHead ?? false };
}

/** Whether `segment` (one `field: problem` of a message) starts with `name` or a path below it. */
function startsWithField(segment: string, name: string): boolean {
  if (!segment.startsWith(name)) {
    // Long field paths are cut (src/transport/bounded-errors.ts): `<first 100 characters>…: problem`.
    const cut = /^(.{100})…: /su.exec(segment);
    return cut?.[1] !== undefined && name.startsWith(cut[1]);
  }
  const rest = segment.slice(name.length);
  return rest.startsWith(": ") || ((rest.startsWith(".") || rest.startsWith("[")) && rest.includes(": "));
}

/**
 * Why a validation message does not name fields of this request, or
 * undefined when it does. The message is `field: problem; field: problem`
 * (a problem's own text may hold "; "; `a, b: problem` names two fields;
 * `; and N more problems` ends a long one).
 */
export function namingProblem(message: string, names: FieldNames): string | undefined {
  const allowed = [...names.fields, ...names.sent, ...(names.wholeBody ? ["body"] : []), ...(names.oversizedHead ? ["headers"] : []), "Idempotency-Key"];
  // A name holding the separator itself ("; ") is swapped for a placeholder before splitting.
  let text = message;
  allowed.forEach((name, i) => {
    if (!name.includes("; ")) return;
    const placeholder = `\u0001${i}\u0001`;
    text = text.split(name).join(placeholder);
    allowed[i] = placeholder;
  });
  const isAllowed = (segment: string) => allowed.some((name) => startsWithField(segment, name));
  let named = 0;
  for (const segment of text.split("; ")) {
    if (/^and \d+ more problems?$/.test(segment)) continue;
    const list = /^((?:[A-Za-z_][\w.-]*, )+[A-Za-z_][\w.-]*): /.exec(segment);
    if (isAllowed(segment) || (list?.[1] !== undefined && list[1].split(", ").every((name) => isAllowed(`${name}: x`)))) {
      named++;
      continue;
    }
    const field = /^([A-Za-z_$][\w.$[\]-]*): /.exec(segment)?.[1];
    if (field !== undefined || named === 0) {
      return `a 400 naming ${JSON.stringify(field ?? segment.slice(0, 60))}, not a field of the request as the caller wrote it: ${JSON.stringify(message.slice(0, 300))}`;
    }
    // Otherwise the segment continues the previous problem's text.
  }
  return named > 0 ? undefined : `a 400 whose message does not name a field: ${JSON.stringify(message.slice(0, 300))}`;
}

const BAD_INPUT_CODES: ReadonlySet<ErrorCodeName> = new Set(["VALIDATION_ERROR", "WEBHOOK_HOST_NOT_ALLOWED"]);

/** Problems with a REST answer (empty when it is fine). */
export function restProblems(answer: RestAnswer, names: FieldNames): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  const leak = leaks(answer.text);
  if (leak) problems.push(leak);
  if (!answer.headers.get("x-request-id")) problems.push("no X-Request-Id");
  if (answer.status < 400) return problems;

  const body = answer.json as { error?: { code?: unknown; message?: unknown } } | undefined;
  const error = body?.error;
  if (!body || !error || Object.keys(body).length !== 1 || typeof error.code !== "string" || typeof error.message !== "string" || Object.keys(error).length !== 2) {
    problems.push(`an error outside the documented shape { error: { code, message } }: ${answer.text.slice(0, 300)}`);
    return problems;
  }
  const spec = ERROR_CODES.get(error.code as ErrorCodeName);
  if (!spec) problems.push(`an unknown error code ${error.code}`);
  else if (spec.httpStatus !== answer.status) problems.push(`${error.code} answered with ${answer.status}, the contract says ${spec.httpStatus}`);
  if (answer.status === 400) {
    if (!BAD_INPUT_CODES.has(error.code as ErrorCodeName)) problems.push(`a 400 with code ${error.code}`);
    else if (error.code === "VALIDATION_ERROR") {
      const naming = namingProblem(error.message, names);
      if (naming) problems.push(naming);
    }
  }
  return problems;
}

const SERVER_CODES: ReadonlySet<Code> = new Set([Code.Internal, Code.Unknown, Code.DataLoss, Code.Unavailable, Code.Unimplemented]);

/** Problems with the outcome of a gRPC call: its error, or none when it succeeded. */
export function grpcProblems(outcome: unknown, names: FieldNames): string[] {
  if (!(outcome instanceof Error)) return [];
  const error = ConnectError.from(outcome);
  const problems: string[] = [];
  if (SERVER_CODES.has(error.code)) problems.push(`answered ${Code[error.code]}: ${error.rawMessage.slice(0, 300)}`);
  const leak = leaks(error.rawMessage);
  if (leak) problems.push(leak);
  const info = error.findDetails(ErrorInfoSchema).find((d) => d.domain === ERROR_DOMAIN);
  if (!info) {
    problems.push(`no mail.v1 ErrorInfo on ${Code[error.code]}: ${error.rawMessage.slice(0, 300)}`);
    return problems;
  }
  const spec = ERROR_CODES.get(info.reason as ErrorCodeName);
  if (!spec) problems.push(`an unknown error code ${info.reason}`);
  else if (spec.grpcCode !== error.code) problems.push(`${info.reason} with ${Code[error.code]}, the contract says ${Code[spec.grpcCode]}`);
  if (error.code === Code.InvalidArgument) {
    if (!BAD_INPUT_CODES.has(info.reason as ErrorCodeName)) problems.push(`INVALID_ARGUMENT with reason ${info.reason}`);
    else if (info.reason === "VALIDATION_ERROR") {
      const naming = namingProblem(error.rawMessage, names);
      if (naming) problems.push(naming);
    }
  }
  return problems;
}

/** Runs a call and returns its outcome: the answer, or what it threw. */
export async function outcomeOf(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return await call();
  } catch (error) {
    return error;
  }
}
