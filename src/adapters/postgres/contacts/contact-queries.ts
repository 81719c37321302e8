import { containsPattern, type ContactFilters } from "../../../capabilities/contacts/filters.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";

/**
 * The SQL of the contact reads, as plain functions so that
 * bench/contacts-explain.ts can EXPLAIN exactly what the store runs.
 * Every statement starts from `company_id = $1`.
 */

/** A statement with bind parameters (never user text in `text`). */
export interface SqlQuery {
  readonly text: string;
  readonly values: unknown[];
}

/** A `contact` row as the queries select it. */
export interface ContactRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  phone: string | null;
  locale: string | null;
  /** Parsed by pg (jsonb). */
  attributes: unknown;
  tags: string[];
  status: string;
  consent_source: string | null;
  consent_at: string | Date | null;
  consent_reference: string | null;
  /** Strings through the ORM's pool, Dates through a plain pool (see ../sql.ts). */
  created_at: string | Date;
  updated_at: string | Date;
  /** created_at as UTC text with all six fractional digits: the cursor position. */
  position_at: string;
}

export interface MemberRow {
  contact_id: string;
  list_id: string;
}

export const CONTACT_COLUMNS = `c.id, c.email, c.first_name, c.last_name, c.company_name, c.phone, c.locale, c.attributes, c.tags,
       c.status, c.consent_source, c.consent_at, c.consent_reference, c.created_at, c.updated_at,
       to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at`;

/**
 * The text `q` searches: exactly the expression of contact_search_index (a
 * pg_trgm GIN index), or the planner could not use it. The address is the
 * normalised one (lower case, A-label domain); the separators let
 * `q=ada lovelace` find first name Ada, last name Lovelace.
 */
export const SEARCH_TEXT = `(c.email_normalized || ' ' || coalesce(c.first_name, '') || ' ' || coalesce(c.last_name, ''))`;

export function contactByIdQuery(companyId: string, id: string): SqlQuery {
  return { text: `select ${CONTACT_COLUMNS} from contact c where c.company_id = $1 and c.id = $2`, values: [companyId, id] };
}

export function contactByKeyQuery(companyId: string, key: string, forUpdate = false): SqlQuery {
  return {
    text: `select ${CONTACT_COLUMNS} from contact c where c.company_id = $1 and c.email_normalized = $2${forUpdate ? " for update" : ""}`,
    values: [companyId, key],
  };
}

/**
 * One page of contacts, newest first: `limit` rows after `after`. Ask for
 * one row more than the page size to learn whether a next page exists.
 *
 * Keyset pagination on (created_at, id), never OFFSET: the row comparison is
 * an index condition of contact_list_index / contact_status_index, so a
 * deep page costs what the first does. Filters and their indexes:
 * - status: contact_status_index keeps the walk an ordered index range;
 * - tag: `tags @> array[tag]`, the GIN index contact_tags_index when the tag
 *   is rare, else a filter on the ordered walk;
 * - q: ILIKE on SEARCH_TEXT, answered by the pg_trgm index
 *   contact_search_index when q has three characters or more and is
 *   selective, else a filter on the ordered walk;
 * - listId: a semi-join on the membership primary key (company_id,
 *   list_id, contact_id).
 */
export function contactPageQuery(companyId: string, filters: ContactFilters, after: KeysetPosition | null, limit: number): SqlQuery {
  const values: unknown[] = [companyId];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = ["c.company_id = $1"];
  if (after) where.push(`(c.created_at, c.id) < (${param(after.createdAt)}::timestamptz, ${param(after.id)}::uuid)`);
  if (filters.status !== undefined) where.push(`c.status = ${param(filters.status)}`);
  if (filters.tag !== undefined) where.push(`c.tags @> array[${param(filters.tag)}]::text[]`);
  if (filters.q !== undefined) where.push(`${SEARCH_TEXT} ilike ${param(containsPattern(filters.q))} escape '\\'`);
  if (filters.listId !== undefined) {
    where.push(
      `exists (select 1 from contact_list_member m where m.company_id = $1 and m.list_id = ${param(filters.listId)}::uuid and m.contact_id = c.id)`,
    );
  }
  return {
    text: `select ${CONTACT_COLUMNS}
             from contact c
            where ${where.join("\n              and ")}
            order by c.created_at desc, c.id desc
            limit ${param(limit)}`,
    values,
  };
}

/** The lists of several contacts in one statement (contact_list_member_contact_index). */
export function membershipsQuery(companyId: string, contactIds: readonly string[]): SqlQuery {
  return {
    text: `select m.contact_id, m.list_id from contact_list_member m
            where m.company_id = $1 and m.contact_id = any($2::uuid[])
            order by m.contact_id, m.list_id`,
    values: [companyId, contactIds],
  };
}
