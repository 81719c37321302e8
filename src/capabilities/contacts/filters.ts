import type { FieldProblem } from "../../contract/api-error.ts";
import type { KeysetCursorKind } from "../shared/keyset-cursor.ts";
import { filterFingerprint, pageSize, refuseProblems } from "../shared/paging.ts";
import { CONTACT_STATUSES, isContactStatus, type ContactStatusName, type ListContactsCommand } from "./types.ts";

/** An address has at most 254 characters and a name 100: a longer `q` cannot match. */
export const MAX_Q_LENGTH = 200;

/**
 * Cursors of GET /mail/v1/contacts: the one keyset codec with a MAC context
 * of their own, so that a cursor of another list never verifies here and
 * the other way round, even under the same secret.
 */
export const CONTACT_CURSOR: KeysetCursorKind = { context: "mail.v1.contacts.cursor.v1", label: "contacts", filters: "status, q, tag and listId" };

/** The filters of a contact-list query, validated. A cursor is only valid with the same filters. */
export interface ContactFilters {
  readonly status: ContactStatusName | undefined;
  readonly q: string | undefined;
  readonly tag: string | undefined;
  /** A UUID, lower-cased; the use case has checked it is a list of the company. */
  readonly listId: string | undefined;
}

export interface ParsedListQuery {
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
export function parseListQuery(query: Omit<ListContactsCommand, "companyId" | "cursor">): ParsedListQuery {
  const problems: FieldProblem[] = [];
  const limit = pageSize(query.limit, problems);

  let status: ContactStatusName | undefined;
  if (query.status !== undefined) {
    if (isContactStatus(query.status)) status = query.status;
    else problems.push({ field: "status", problem: `must be one of ${CONTACT_STATUSES.join(", ")}` });
  }

  // An empty search or tag is what `?q=` sends: no filter.
  const q = query.q === undefined || query.q === "" ? undefined : query.q;
  if (q !== undefined && q.length > MAX_Q_LENGTH) problems.push({ field: "q", problem: `must be at most ${MAX_Q_LENGTH} characters` });
  // PostgreSQL text cannot hold NUL: a 400 rather than a failed statement.
  if (q?.includes("\0")) problems.push({ field: "q", problem: "must not contain NUL characters" });
  const tag = query.tag === undefined || query.tag === "" ? undefined : query.tag;
  if (tag?.includes("\0")) problems.push({ field: "tag", problem: "must not contain NUL characters" });
  const listId = query.listId === undefined || query.listId === "" ? undefined : query.listId.toLowerCase();

  refuseProblems(problems);
  return { limit, filters: { status, q, tag, listId } };
}

/** The fingerprint a contact cursor carries: the paging kit's, over the filters in this order. */
export function contactFiltersFingerprint(filters: ContactFilters): string {
  return filterFingerprint([filters.status, filters.q, filters.tag, filters.listId]);
}

/** `q` as an ILIKE pattern: a literal substring, with the pattern characters escaped. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
