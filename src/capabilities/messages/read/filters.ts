import type { FieldProblem } from "../../../contract/api-error.ts";
import { pageSize, refuseProblems } from "../../shared/paging.ts";
import { checkEmailAddress } from "../compose/email-address.ts";
import { isMessageStatus, type ListMessagesCommand, MESSAGE_STATUSES, type MessageStatusName } from "./types.ts";

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
  /**
   * The whole address, checked like a send's recipient and lower-cased:
   * messages whose recipient, lower-cased, is this (the domain is stored in
   * its lower-case A-label form, so either spelling of an internationalised
   * domain finds the same messages).
   */
  readonly recipient: string | undefined;
}

export interface ParsedListOptions {
  readonly limit: number;
  readonly filters: MessageFilters;
}

/** Validates everything but the cursor (that needs the filters); names every bad field at once. */
export function parseListOptions(options: Omit<ListMessagesCommand, "companyId" | "cursor">): ParsedListOptions {
  const problems: FieldProblem[] = [];
  const limit = pageSize(options.limit, problems);

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

  // An empty value is what `?recipient=` sends: no filter.
  let recipient: string | undefined;
  if (options.recipient !== undefined && options.recipient !== "") {
    const checked = checkEmailAddress(options.recipient.trim());
    if (checked.ok) recipient = checked.address.toLowerCase();
    else problems.push({ field: "recipient", problem: checked.problem });
  }

  const since = options.since;
  if (since !== undefined && !(since instanceof Date && Number.isFinite(since.getTime()))) {
    problems.push({ field: "since", problem: "must be a valid date-time" });
  }

  refuseProblems(problems);
  return { limit, filters: { status, q, since, tag: options.tag, recipient } };
}

/**
 * The filters in the fixed order of the cursor's fingerprint (paging kit,
 * filterFingerprint). `recipient` joins them only when set: a cursor issued
 * without it keeps its fingerprint.
 */
export function fingerprintedFilters(filters: MessageFilters): readonly (string | Date | undefined)[] {
  const base = [filters.status, filters.q, filters.since, filters.tag];
  return filters.recipient === undefined ? base : [...base, filters.recipient];
}

/** `q` as an ILIKE pattern: a literal substring, with the pattern characters escaped. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
