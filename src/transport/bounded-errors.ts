import { ApiError, type FieldProblem, ValidationError } from "../contract/api-error.ts";

/**
 * Error answers stay small whatever the request held. A body with thousands
 * of unknown keys (or one key a megabyte long) would otherwise come back as
 * a multi-megabyte 400, and be stored as such for idempotent replays.
 */

/** Problems named in full; the rest are counted. */
export const MAX_REPORTED_PROBLEMS = 10;
/** A field path as the caller wrote it is cut to this many characters. */
const MAX_FIELD_CHARS = 100;
/** A problem's text is cut to this many characters. */
const MAX_PROBLEM_CHARS = 300;
/** Any other error message is cut to this many characters. */
const MAX_MESSAGE_CHARS = 4_000;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** `field: problem; …` for the first problems, then `; and N more problems`. */
export function boundedProblemsMessage(fields: readonly FieldProblem[]): string {
  const shown = fields
    .slice(0, MAX_REPORTED_PROBLEMS)
    .map((f) => `${cut(f.field, MAX_FIELD_CHARS)}: ${cut(f.problem, MAX_PROBLEM_CHARS)}`)
    .join("; ");
  const more = fields.length - MAX_REPORTED_PROBLEMS;
  return more > 0 ? `${shown}; and ${more} more ${more === 1 ? "problem" : "problems"}` : shown;
}

/**
 * The error with a bounded message and, when given, extra headers (the
 * rate-limit headers of the call). Returns the error itself when nothing
 * changes. Idempotent: a bounded message stays as it is.
 */
export function boundedApiError(error: ApiError, extraHeaders: Readonly<Record<string, string>> = {}): ApiError {
  const message =
    error instanceof ValidationError && error.fields.length > 0
      ? boundedProblemsMessage(error.fields)
      : cut(error.message, MAX_MESSAGE_CHARS);
  if (message === error.message && Object.keys(extraHeaders).length === 0) return error;
  return new ApiError(error.code, message, { ...error.headers, ...extraHeaders });
}
