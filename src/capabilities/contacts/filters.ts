import { createHash } from "node:crypto";
import { ValidationError, type FieldProblem } from "../../contract/api-error.ts";
import { CONTACT_STATUSES, isContactStatus, type ContactStatusName, type ListContactsOptions } from "./types.ts";

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
/** An address has at most 254 characters and a name 100: a longer `q` cannot match. */
export const MAX_Q_LENGTH = 200;

/** The filters of a contact-list query, validated. A cursor is only valid with the same filters. */
export interface ContactFilters {
  readonly status: ContactStatusName | undefined;
  readonly q: string | undefined;
  readonly tag: string | undefined;
  /** A UUID, lower-cased; the use case has checked it is a list of the company. */
  readonly listId: string | undefined;
}

export interface ParsedListOptions {
  readonly limit: number;
  readonly filters: ContactFilters;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * Validates everything but the cursor (that needs the filters) and the
 * list's existence (that needs the store); names every bad field at once.
 * A listId that is not a UUID is passed on as is: it names no list, which
 * the use case answers with 404 like any unknown list.
 */
export function parseListOptions(options: ListContactsOptions): ParsedListOptions {
  const problems: FieldProblem[] = [];

  const limit = options.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    problems.push({ field: "limit", problem: `must be an integer from 1 to ${MAX_LIMIT}` });
  }

  let status: ContactStatusName | undefined;
  if (options.status !== undefined) {
    if (isContactStatus(options.status)) status = options.status;
    else problems.push({ field: "status", problem: `must be one of ${CONTACT_STATUSES.join(", ")}` });
  }

  // An empty search or tag is what `?q=` sends: no filter.
  const q = options.q === undefined || options.q === "" ? undefined : options.q;
  if (q !== undefined && q.length > MAX_Q_LENGTH) problems.push({ field: "q", problem: `must be at most ${MAX_Q_LENGTH} characters` });
  // PostgreSQL text cannot hold NUL: a 400 rather than a failed statement.
  if (q?.includes("\0")) problems.push({ field: "q", problem: "must not contain NUL characters" });
  const tag = options.tag === undefined || options.tag === "" ? undefined : options.tag;
  if (tag?.includes("\0")) problems.push({ field: "tag", problem: "must not contain NUL characters" });
  const listId = options.listId === undefined || options.listId === "" ? undefined : options.listId.toLowerCase();

  if (problems.length > 0) throw new ValidationError(problems);
  return { limit, filters: { status, q, tag, listId } };
}

/**
 * A short hash of the filters, carried in the cursor so that it cannot be
 * replayed with other filters. Hashed, not copied: the search text stays
 * out of the cursor. The limit is not part of it.
 */
export function filterFingerprint(filters: ContactFilters): string {
  const canonical = JSON.stringify([filters.status ?? null, filters.q ?? null, filters.tag ?? null, filters.listId ?? null]);
  return createHash("sha256").update(canonical).digest().subarray(0, 16).toString("base64url");
}

/** `q` as an ILIKE pattern: a literal substring, with the pattern characters escaped. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
