/**
 * Suppressed addresses in PostgreSQL, always per company (every statement
 * filters on company_id). Plain SQL on the pool: `add` is an
 * INSERT ... ON CONFLICT DO NOTHING (the first reason wins, concurrent
 * reports of one address cannot fail), and `isListed` sits on the send path
 * as one primary-key probe.
 */
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { containsPattern } from "../../../capabilities/contacts/filters.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import type {
  NewSuppression,
  SuppressionEntry,
  SuppressionFilters,
  SuppressionReason,
  SuppressionsStore,
} from "../../../capabilities/suppressions/ports.ts";
import { insertAuditRow } from "../audit/audit-rows.ts";
import { isUuid } from "../ids.ts";
import { toDate, type Pool, type PoolClient } from "../sql.ts";
import { inTransaction, rollback } from "../transaction.ts";

interface SuppressionRow {
  email: string;
  reason: SuppressionReason;
  message_id: string | null;
  created_at: string | Date;
}

const COLUMNS = `email, reason, message_id, created_at`;

function entryOf(row: SuppressionRow): SuppressionEntry {
  return { email: row.email, reason: row.reason, messageId: row.message_id, createdAt: toDate(row.created_at) };
}

export class PostgresSuppressionsStore implements SuppressionsStore {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async isListed(companyId: string, email: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const pool = await this.#pool();
    const { rows } = await pool.query(`select 1 from suppression where company_id = $1 and email = $2`, [companyId, email]);
    return rows.length > 0;
  }

  async add(companyId: string, entry: NewSuppression): Promise<boolean> {
    const pool = await this.#pool();
    return (await insertOnce(pool, companyId, entry)) !== undefined;
  }

  async addAudited(companyId: string, entry: NewSuppression, audit: AuditNote): Promise<{ entry: SuppressionEntry; created: boolean }> {
    // Another remove may delete the row the insert met before it is read: then insert again.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const outcome = await inTransaction(this.#pool, async (client) => {
        const row = await insertOnce(client, companyId, entry);
        if (row) {
          await insertAuditRow(client, companyId, { ...audit, targetType: "suppression", targetId: row.email }, new Date());
          return { entry: entryOf(row), created: true };
        }
        const { rows } = await client.query<SuppressionRow>(`select ${COLUMNS} from suppression where company_id = $1 and email = $2`, [companyId, entry.email]);
        return rollback(rows[0] ? { entry: entryOf(rows[0]), created: false } : undefined);
      });
      if (outcome) return outcome;
    }
    throw new Error("suppression: the address was removed and listed again three times while it was added");
  }

  async find(companyId: string, email: string): Promise<SuppressionEntry | undefined> {
    if (!isUuid(companyId)) return undefined;
    const pool = await this.#pool();
    const { rows } = await pool.query<SuppressionRow>(`select ${COLUMNS} from suppression where company_id = $1 and email = $2`, [companyId, email]);
    return rows[0] ? entryOf(rows[0]) : undefined;
  }

  async list(companyId: string, filters: SuppressionFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<SuppressionEntry>[]> {
    if (!isUuid(companyId)) return [];
    const values: unknown[] = [companyId];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    const where = ["company_id = $1"];
    if (filters.q !== undefined) where.push(`email ilike ${param(containsPattern(filters.q))} escape '\\'`);
    if (filters.reason !== undefined) where.push(`reason = ${param(filters.reason)}`);
    if (filters.since !== undefined) where.push(`created_at >= ${param(filters.since)}`);
    if (filters.until !== undefined) where.push(`created_at < ${param(filters.until)}`);
    if (after) where.push(`(created_at, email) < (${param(after.createdAt)}::timestamptz, ${param(after.id)}::text)`);
    const pool = await this.#pool();
    const { rows } = await pool.query<SuppressionRow & { position_at: string }>(
      `select ${COLUMNS}, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at
         from suppression
        where ${where.join(" and ")}
        order by created_at desc, email desc
        limit ${param(limit)}`,
      values,
    );
    return rows.map((row) => ({ item: entryOf(row), position: { createdAt: row.position_at, id: row.email } }));
  }

  async remove(companyId: string, email: string, decide: (entry: SuppressionEntry) => AuditNote): Promise<SuppressionEntry | undefined> {
    if (!isUuid(companyId)) return undefined;
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<SuppressionRow>(
        `select ${COLUMNS} from suppression where company_id = $1 and email = $2 for update`,
        [companyId, email],
      );
      const row = rows[0];
      if (!row) return undefined;
      const entry = entryOf(row);
      const audit = decide(entry);
      await client.query(`delete from suppression where company_id = $1 and email = $2`, [companyId, email]);
      await insertAuditRow(client, companyId, { ...audit, targetType: "suppression", targetId: entry.email }, new Date());
      return entry;
    });
  }
}

/** Lists the address unless it is listed already; the row when this statement added it. */
async function insertOnce(db: Pick<PoolClient, "query">, companyId: string, entry: NewSuppression): Promise<SuppressionRow | undefined> {
  const { rows } = await db.query<SuppressionRow>(
    `insert into suppression (company_id, email, reason, message_id) values ($1, $2, $3, $4)
     on conflict (company_id, email) do nothing
     returning ${COLUMNS}`,
    [companyId, entry.email, entry.reason, entry.messageId],
  );
  return rows[0];
}
