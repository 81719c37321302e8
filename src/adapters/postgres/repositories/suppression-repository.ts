/**
 * Suppressed addresses, always per company (the rule at the top of
 * api-key-repository.ts). Raw SQL on the pool: `suppress` is an
 * INSERT ... ON CONFLICT DO NOTHING (the first reason wins, concurrent
 * reports of one address cannot fail), and `isSuppressed` sits on the send
 * path as one primary-key probe.
 */
import { toDate, type Pool } from "../sql.ts";
import { isUuid } from "./ids.ts";

export type SuppressionReason = "bounce" | "complaint" | "manual";

export interface SuppressionRow {
  readonly email: string;
  readonly reason: SuppressionReason;
  readonly messageId: string | null;
  readonly createdAt: Date;
}

export class SuppressionRepository {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  /** `email` as stored (normalised by the caller). */
  async existsForCompany(companyId: string, email: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const pool = await this.#pool();
    const { rows } = await pool.query(`select 1 from suppression where company_id = $1 and email = $2`, [companyId, email]);
    return rows.length > 0;
  }

  /** Adds the address unless present; true when this call added it. */
  async insertForCompany(companyId: string, row: { email: string; reason: SuppressionReason; messageId: string | null }): Promise<boolean> {
    const pool = await this.#pool();
    const result = await pool.query(
      `insert into suppression (company_id, email, reason, message_id) values ($1, $2, $3, $4)
       on conflict (company_id, email) do nothing`,
      [companyId, row.email, row.reason, row.messageId],
    );
    return result.rowCount === 1;
  }

  /** The company's suppressions, newest first. */
  async listForCompany(companyId: string): Promise<SuppressionRow[]> {
    if (!isUuid(companyId)) return [];
    const pool = await this.#pool();
    const { rows } = await pool.query<{ email: string; reason: SuppressionReason; message_id: string | null; created_at: string | Date }>(
      `select email, reason, message_id, created_at from suppression where company_id = $1 order by created_at desc, email`,
      [companyId],
    );
    return rows.map((row) => ({ email: row.email, reason: row.reason, messageId: row.message_id, createdAt: toDate(row.created_at) }));
  }

  /** True when a row was deleted. */
  async deleteForCompany(companyId: string, email: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const pool = await this.#pool();
    const result = await pool.query(`delete from suppression where company_id = $1 and email = $2`, [companyId, email]);
    return (result.rowCount ?? 0) > 0;
  }
}
