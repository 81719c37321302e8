/**
 * Suppressed addresses in PostgreSQL, always per company (every statement
 * filters on company_id). Plain SQL on the pool: `add` is an
 * INSERT ... ON CONFLICT DO NOTHING (the first reason wins, concurrent
 * reports of one address cannot fail), and `isListed` sits on the send path
 * as one primary-key probe.
 */
import type { NewSuppression, SuppressionEntry, SuppressionReason, SuppressionsStore } from "../../../capabilities/suppressions/ports.ts";
import { isUuid } from "../ids.ts";
import { toDate, type Pool } from "../sql.ts";

export class PostgresSuppressionsStore implements SuppressionsStore {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async companyExists(companyId: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const { rows } = await (await this.#pool()).query(`select 1 from company where id = $1`, [companyId]);
    return rows.length > 0;
  }

  async isListed(companyId: string, email: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const pool = await this.#pool();
    const { rows } = await pool.query(`select 1 from suppression where company_id = $1 and email = $2`, [companyId, email]);
    return rows.length > 0;
  }

  async add(companyId: string, entry: NewSuppression): Promise<boolean> {
    const pool = await this.#pool();
    const result = await pool.query(
      `insert into suppression (company_id, email, reason, message_id) values ($1, $2, $3, $4)
       on conflict (company_id, email) do nothing`,
      [companyId, entry.email, entry.reason, entry.messageId],
    );
    return result.rowCount === 1;
  }

  async list(companyId: string): Promise<SuppressionEntry[]> {
    if (!isUuid(companyId)) return [];
    const pool = await this.#pool();
    const { rows } = await pool.query<{ email: string; reason: SuppressionReason; message_id: string | null; created_at: string | Date }>(
      `select email, reason, message_id, created_at from suppression where company_id = $1 order by created_at desc, email`,
      [companyId],
    );
    return rows.map((row) => ({ email: row.email, reason: row.reason, messageId: row.message_id, createdAt: toDate(row.created_at) }));
  }

  async remove(companyId: string, email: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const pool = await this.#pool();
    const result = await pool.query(`delete from suppression where company_id = $1 and email = $2`, [companyId, email]);
    return (result.rowCount ?? 0) > 0;
  }
}
