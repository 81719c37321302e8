import { createHash } from "node:crypto";
import { ValidationError, type FieldProblem } from "../../../contract/api-error.ts";
import { isMessageStatus, MESSAGE_STATUSES, type ListMessagesOptions, type MessageStatusName } from "./types.ts";

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
/**
 * A subject has at most 500 characters (and an address far fewer), so a
 * longer `q` can never match; refusing it also caps the cost of the ILIKE scan.
 */
export const MAX_Q_LENGTH = 500;

/** The filters of a message-log query, validated. A cursor is only valid with the same filters. */
export interface MessageFilters {
  readonly status: MessageStatusName | undefined;
  readonly q: string | undefined;
  readonly since: Date | undefined;
  readonly tag: string | undefined;
}

export interface ParsedListOptions {
  readonly limit: number;
  readonly filters: MessageFilters;
}

/** Validates everything but the cursor (that needs the filters); names every bad field at once. */
export function parseListOptions(options: ListMessagesOptions): ParsedListOptions {
  const problems: FieldProblem[] = [];

  const limit = options.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    problems.push({ field: "limit", problem: `must be an integer from 1 to ${MAX_LIMIT}` });
  }

  let status: MessageStatusName | undefined;
  if (options.status !== undefined) {
    if (isMessageStatus(options.status)) status = options.status;
    else problems.push({ field: "status", problem: `must be one of ${MESSAGE_STATUSES.join(", ")}` });
  }

  // An empty search matches everything: treat it as no search rather than a
  // pattern that makes PostgreSQL evaluate ILIKE '%%' on every row.
  const q = options.q === undefined || options.q === "" ? undefined : options.q;
  if (q !== undefined && q.length > MAX_Q_LENGTH) {
    problems.push({ field: "q", problem: `must be at most ${MAX_Q_LENGTH} characters` });
  }

  // PostgreSQL text cannot hold NUL: without this check a `%00` in the query
  // string would fail the statement (a 500) instead of the request (a 400).
  if (q?.includes("\0")) problems.push({ field: "q", problem: "must not contain NUL characters" });
  if (options.tag?.includes("\0")) problems.push({ field: "tag", problem: "must not contain NUL characters" });

  const since = options.since;
  if (since !== undefined && !(since instanceof Date && Number.isFinite(since.getTime()))) {
    problems.push({ field: "since", problem: "must be a valid date-time" });
  }

  if (problems.length > 0) throw new ValidationError(problems);
  return { limit, filters: { status, q, since, tag: options.tag } };
}

/**
 * A short hash of the filters, carried in the cursor so that a cursor cannot
 * be replayed with other filters (its position would mean nothing there).
 * Hashed rather than copied: the search text stays out of the cursor and the
 * cursor keeps a fixed size. The limit is not part of it: changing the page
 * size between pages is harmless.
 */
export function filterFingerprint(filters: MessageFilters): string {
  const canonical = JSON.stringify([
    filters.status ?? null,
    filters.q ?? null,
    filters.since?.toISOString() ?? null,
    filters.tag ?? null,
  ]);
  return createHash("sha256").update(canonical).digest().subarray(0, 16).toString("base64url");
}

/** `q` as an ILIKE pattern: a literal substring, with the pattern characters escaped. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
