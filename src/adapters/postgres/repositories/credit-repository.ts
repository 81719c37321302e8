/**
 * Credit wallets and their ledger, always per company (the rule at the top
 * of api-key-repository.ts). Raw SQL on a `pg` client: the conditional
 * decrement and the once-per-message ledger insert must be single statements
 * whose outcome (row or no row) decides the transaction, which the unit of
 * work cannot express. The caller owns the transaction (see
 * src/domain/credits/credits-service.ts).
 */
import { toDate, type Pool, type PoolClient } from "../sql.ts";
import { isUuid } from "./ids.ts";

export type LedgerReason = "grant" | "adjustment" | "charge" | "refund";

export interface LedgerRow {
  readonly id: number;
  readonly delta: number;
  readonly reason: LedgerReason;
  readonly messageId: string | null;
  readonly note: string;
  readonly createdAt: Date;
}

export interface NewLedgerRow {
  readonly delta: number;
  readonly reason: LedgerReason;
  readonly messageId?: string;
  readonly note?: string;
}

interface RawLedgerRow {
  id: string | number;
  delta: string | number;
  reason: LedgerReason;
  message_id: string | null;
  note: string;
  created_at: string | Date;
}

export class CreditRepository {
  readonly #db: Pick<Pool | PoolClient, "query">;

  /** `db`: a pooled client inside a transaction, or the pool for single reads. */
  constructor(db: Pick<Pool | PoolClient, "query">) {
    this.#db = db;
  }

  /** The balance; 0 when the company has no wallet yet (or no such company). */
  async balanceForCompany(companyId: string): Promise<number> {
    if (!isUuid(companyId)) return 0;
    const { rows } = await this.#db.query<{ balance: string | number }>(`select balance from credit_wallet where company_id = $1`, [companyId]);
    return rows[0] ? Number(rows[0].balance) : 0;
  }

  /** The latest ledger rows of the company, newest first. */
  async ledgerForCompany(companyId: string, limit: number): Promise<LedgerRow[]> {
    if (!isUuid(companyId)) return [];
    const { rows } = await this.#db.query<RawLedgerRow>(
      `select id, delta, reason, message_id, note, created_at
         from credit_ledger where company_id = $1
        order by id desc limit $2`,
      [companyId, limit],
    );
    return rows.map((row) => ({
      id: Number(row.id),
      delta: Number(row.delta),
      reason: row.reason,
      messageId: row.message_id,
      note: row.note,
      createdAt: toDate(row.created_at),
    }));
  }

  /** Creates the company's wallet (balance 0) unless it exists. */
  async ensureWalletForCompany(companyId: string): Promise<void> {
    await this.#db.query(`insert into credit_wallet (company_id) values ($1) on conflict (company_id) do nothing`, [companyId]);
  }

  /**
   * Adds `delta` (may be negative) unless the balance would go below zero;
   * returns the new balance, or null when refused (or there is no wallet).
   * Concurrent changes serialise on the wallet row, and the condition is
   * re-checked on the row's latest version, so the balance can never be
   * overdrawn.
   */
  async addToBalanceForCompany(companyId: string, delta: number): Promise<number | null> {
    const { rows } = await this.#db.query<{ balance: string | number }>(
      `update credit_wallet set balance = balance + $2, updated_at = now()
        where company_id = $1 and balance + $2 >= 0
        returning balance`,
      [companyId, delta],
    );
    return rows[0] ? Number(rows[0].balance) : null;
  }

  /**
   * Appends a ledger row. Returns false (and writes nothing) when the
   * message already has a row of that reason: the partial unique index
   * `credit_ledger_once_per_message` decides, so concurrent attempts wait
   * for each other instead of both passing a check.
   */
  async appendLedgerForCompany(companyId: string, entry: NewLedgerRow): Promise<boolean> {
    const result = await this.#db.query(
      `insert into credit_ledger (company_id, delta, reason, message_id, note)
       values ($1, $2, $3, $4, $5)
       on conflict (message_id, reason) where message_id is not null do nothing`,
      [companyId, entry.delta, entry.reason, entry.messageId ?? null, entry.note ?? ""],
    );
    return result.rowCount === 1;
  }

  /** Whether the company's ledger holds a row of `reason` for the message. */
  async hasMessageEntryForCompany(companyId: string, messageId: string, reason: LedgerReason): Promise<boolean> {
    if (!isUuid(companyId) || !isUuid(messageId)) return false;
    const { rows } = await this.#db.query(
      `select 1 from credit_ledger where company_id = $1 and message_id = $2 and reason = $3`,
      [companyId, messageId, reason],
    );
    return rows.length > 0;
  }
}
