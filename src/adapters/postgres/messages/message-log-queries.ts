import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import { containsPattern, type MessageFilters } from "../../../capabilities/messages/read/filters.ts";

/**
 * The SQL of the read calls, as plain functions so that
 * bench/explain-message-log.ts can EXPLAIN exactly what the reader runs.
 *
 * Every statement starts from `company_id = $1`: each index a tenant query
 * uses leads with it, and a row of another company is never even read.
 */

/** A statement with bind parameters (never user text in `text`). */
export interface SqlQuery {
  readonly text: string;
  readonly values: unknown[];
}

/** A `message` row as the read queries select it. */
export interface MessageRow {
  id: string;
  recipient: string;
  subject: string;
  template_id: string | null;
  status: string;
  provider_message_id: string | null;
  error_code: string | null;
  /** A string through the ORM's pool, a Date through a plain pool (see adapters/postgres/sql.ts). */
  created_at: string | Date;
  sent_at: string | Date | null;
  last_event_at: string | Date | null;
  /** Parsed by pg (jsonb); a string only if someone registered a raw parser. */
  tags: unknown;
  /** created_at as UTC text with all six fractional digits: the cursor position. */
  position_at: string;
}

export interface EventRow {
  message_id: string;
  type: string;
  at: string | Date;
}

const COLUMNS = `m.id, m.recipient, m.subject, m.template_id, m.status, m.provider_message_id, m.error_code,
       m.created_at, m.sent_at, m.last_event_at, m.tags,
       to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at`;

/** One message of one company. The caller has checked `id` is a UUID. */
export function messageQuery(companyId: string, id: string): SqlQuery {
  return {
    text: `select ${COLUMNS}
             from message m
            where m.company_id = $1 and m.id = $2`,
    values: [companyId, id],
  };
}

/**
 * One page of the message log, newest first: `limit` rows after `after`.
 * Ask for one row more than the page size to learn whether a next page exists.
 *
 * Keyset pagination on (created_at, id), never OFFSET: the row comparison
 * `(created_at, id) < (position)` is an index condition of
 * message_log_index / message_log_status_index (both end in
 * `created_at desc, id desc`), so a page deep in the log costs what the first
 * one does, and rows inserted meanwhile (all newer than the walk's start)
 * neither repeat nor hide rows of the walk. `id` breaks ties between rows
 * created in the same microsecond.
 *
 * Filters and the index they use:
 * - status: message_log_status_index (company_id, status, created_at desc,
 *   id desc): the walk stays an ordered index range.
 * - since: an index condition on created_at of either index.
 * - tag: `tags ? key`, answered by the GIN index on tags (default jsonb_ops
 *   class) when the tag is rare; when it is common the planner keeps the
 *   ordered walk of message_log_index with the tag as a filter.
 * - q: ILIKE on recipient or subject, with % and _ escaped: also a filter on
 *   the ordered walk, no index helps a substring search without pg_trgm
 *   (not installed; no schema change here). Same cost profile as tag.
 * - recipient: `lower(recipient) = key`, an ordered range of
 *   message_recipient_index (company_id, lower(recipient), created_at desc,
 *   id desc): one address's messages (a contact's page) cost what they
 *   hold, however long the company's log.
 */
export function listQuery(companyId: string, filters: MessageFilters, after: KeysetPosition | null, limit: number): SqlQuery {
  const values: unknown[] = [companyId];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = ["m.company_id = $1"];
  if (after) where.push(`(m.created_at, m.id) < (${param(after.createdAt)}::timestamptz, ${param(after.id)}::uuid)`);
  if (filters.status !== undefined) where.push(`m.status = ${param(filters.status)}`);
  if (filters.since !== undefined) where.push(`m.created_at >= ${param(filters.since)}`);
  if (filters.tag !== undefined) where.push(`m.tags ? ${param(filters.tag)}`);
  if (filters.recipient !== undefined) where.push(`lower(m.recipient) = ${param(filters.recipient)}`);
  if (filters.q !== undefined) {
    const pattern = param(containsPattern(filters.q));
    where.push(`(m.recipient ilike ${pattern} escape '\\' or m.subject ilike ${pattern} escape '\\')`);
  }
  return {
    text: `select ${COLUMNS}
             from message m
            where ${where.join("\n              and ")}
            order by m.created_at desc, m.id desc
            limit ${param(limit)}`,
    values,
  };
}

/**
 * The events of several messages in one statement (no query per message),
 * oldest first, from message_event_message_index (message_id, at, id).
 * company_id is redundant with the ids (they come from a company-scoped
 * query) and kept as a second fence.
 */
export function eventsQuery(companyId: string, messageIds: readonly string[]): SqlQuery {
  return {
    text: `select e.message_id, e.type, e.at
             from message_event e
            where e.message_id = any($1::uuid[]) and e.company_id = $2
            order by e.message_id, e.at, e.id`,
    values: [messageIds, companyId],
  };
}
