/**
 * Credit wallets and their ledger in PostgreSQL, always per company (every
 * statement filters on company_id). Plain SQL: the conditional decrement
 * and the once-per-message ledger insert must be single statements whose
 * outcome (row or no row) decides the transaction, which the unit of work
 * cannot express.
 */
import type {
  AdjustResult,
  BalanceChange,
  ChargeResult,
  CreditsStore,
  LedgerEntry,
  LedgerReason,
  RefundOutcome,
} from "../../../capabilities/credits/ports.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { isUuid } from "../ids.ts";
import { toDate, type Pool, type PoolClient } from "../sql.ts";
import { inTransaction, rollback } from "../transaction.ts";

interface NewLedgerRow {
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
  position_at: string;
}

type Db = Pick<Pool | PoolClient, "query">;

export class PostgresCreditsStore implements CreditsStore {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async companyName(companyId: string): Promise<string | undefined> {
    if (!isUuid(companyId)) return undefined;
    const { rows } = await (await this.#pool()).query<{ name: string }>(`select name from company where id = $1`, [companyId]);
    return rows[0]?.name;
  }

  async balance(companyId: string): Promise<number> {
    return balanceOf(await this.#pool(), companyId);
  }

  async ledger(companyId: string, reason: LedgerReason | undefined, after: KeysetPosition | null, limit: number): Promise<Positioned<LedgerEntry>[]> {
    if (!isUuid(companyId)) return [];
    const values: unknown[] = [companyId];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    const where = ["company_id = $1"];
    if (reason !== undefined) where.push(`reason = ${param(reason)}`);
    // Entries are numbered as written: the id alone orders the ledger (credit_ledger_company_index).
    if (after) where.push(`id < ${param(after.id)}::bigint`);
    const { rows } = await (await this.#pool()).query<RawLedgerRow>(
      `select id, delta, reason, message_id, note, created_at,
              to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at
         from credit_ledger where ${where.join(" and ")}
        order by id desc limit ${param(limit)}`,
      values,
    );
    return rows.map((row) => ({
      item: {
        id: Number(row.id),
        delta: Number(row.delta),
        reason: row.reason,
        messageId: row.message_id,
        note: row.note,
        createdAt: toDate(row.created_at),
      },
      position: { createdAt: row.position_at, id: String(row.id) },
    }));
  }

  async adjust(companyId: string, change: BalanceChange): Promise<AdjustResult> {
    return inTransaction<AdjustResult>(this.#pool, async (client) => {
      await client.query(`insert into credit_wallet (company_id) values ($1) on conflict (company_id) do nothing`, [companyId]);
      const balance = await addToBalance(client, companyId, change.delta);
      // Refused: the wallet just created (if it was) goes too.
      if (balance === null) return rollback({ kind: "below_zero", balance: await balanceOf(client, companyId) });
      await appendLedger(client, companyId, change);
      return { kind: "applied", balance };
    });
  }

  /**
   * One transaction: the ledger row goes in first (a concurrent charge of
   * the same message waits on its unique index entry, then finds it and
   * does nothing), then the balance is decremented only if it is at least
   * 1; if not, the transaction is rolled back and nothing is recorded.
   */
  async charge(companyId: string, messageId: string): Promise<ChargeResult> {
    return inTransaction<ChargeResult>(this.#pool, async (client) => {
      if (!(await appendLedger(client, companyId, { delta: -1, reason: "charge", messageId }))) {
        return rollback({ outcome: (await hasMessageEntry(client, companyId, messageId, "charge")) ? "already_charged" : "charged_elsewhere" });
      }
      const balance = await addToBalance(client, companyId, -1);
      return balance === null ? rollback({ outcome: "insufficient" }) : { outcome: "charged", balance };
    });
  }

  /** Same construction as charge: the refund's ledger row decides. */
  async refund(companyId: string, messageId: string): Promise<RefundOutcome> {
    return inTransaction<RefundOutcome>(this.#pool, async (client) => {
      if (!(await hasMessageEntry(client, companyId, messageId, "charge"))) return rollback("not_charged");
      if (!(await appendLedger(client, companyId, { delta: 1, reason: "refund", messageId }))) return rollback("already_refunded");
      // The wallet exists: the charge decremented it.
      if ((await addToBalance(client, companyId, 1)) === null) throw new Error(`no credit wallet for company ${companyId}`);
      return "refunded";
    });
  }
}

/** The balance; 0 when the company has no wallet yet (or no such company). */
async function balanceOf(db: Db, companyId: string): Promise<number> {
  if (!isUuid(companyId)) return 0;
  const { rows } = await db.query<{ balance: string | number }>({
    // Named (here and below): every accepted send and every charge runs these; each connection plans them once.
    name: "credit_balance",
    text: `select balance from credit_wallet where company_id = $1`,
    values: [companyId],
  });
  return rows[0] ? Number(rows[0].balance) : 0;
}

/**
 * Adds `delta` (may be negative) unless the balance would go below zero;
 * returns the new balance, or null when refused (or there is no wallet).
 * Concurrent changes serialise on the wallet row, and the condition is
 * re-checked on the row's latest version, so the balance can never be
 * overdrawn.
 */
async function addToBalance(db: Db, companyId: string, delta: number): Promise<number | null> {
  const { rows } = await db.query<{ balance: string | number }>({
    name: "credit_add_to_balance",
    text: `update credit_wallet set balance = balance + $2, updated_at = now()
            where company_id = $1 and balance + $2 >= 0
            returning balance`,
    values: [companyId, delta],
  });
  return rows[0] ? Number(rows[0].balance) : null;
}

/**
 * Appends a ledger row. Returns false (and writes nothing) when the message
 * already has a row of that reason: the partial unique index
 * `credit_ledger_once_per_message` decides, so concurrent attempts wait for
 * each other instead of both passing a check.
 */
async function appendLedger(db: Db, companyId: string, entry: NewLedgerRow): Promise<boolean> {
  const result = await db.query({
    name: "credit_append_ledger",
    text: `insert into credit_ledger (company_id, delta, reason, message_id, note)
           values ($1, $2, $3, $4, $5)
           on conflict (message_id, reason) where message_id is not null do nothing`,
    values: [companyId, entry.delta, entry.reason, entry.messageId ?? null, entry.note ?? ""],
  });
  return result.rowCount === 1;
}

/** Whether the company's ledger holds a row of `reason` for the message. */
async function hasMessageEntry(db: Db, companyId: string, messageId: string, reason: LedgerReason): Promise<boolean> {
  if (!isUuid(companyId) || !isUuid(messageId)) return false;
  const { rows } = await db.query({
    name: "credit_has_message_entry",
    text: `select 1 from credit_ledger where company_id = $1 and message_id = $2 and reason = $3`,
    values: [companyId, messageId, reason],
  });
  return rows.length > 0;
}
