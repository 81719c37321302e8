import type { MikroORM } from "@mikro-orm/postgresql";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { CompanyRepository } from "../../adapters/postgres/repositories/company-repository.ts";
import { CreditRepository, type LedgerRow } from "../../adapters/postgres/repositories/credit-repository.ts";
import { isUuid } from "../../adapters/postgres/repositories/ids.ts";
import type { Pool } from "../../adapters/postgres/sql.ts";
import { inTransaction, rollback } from "../../adapters/postgres/transaction.ts";

export type LedgerEntry = LedgerRow;
export type ChargeOutcome = "charged" | "already_charged" | "insufficient";
export type RefundOutcome = "refunded" | "already_refunded" | "not_charged";

export interface Wallet {
  readonly companyId: string;
  readonly balance: number;
  /** The latest entries, newest first. */
  readonly ledger: readonly LedgerEntry[];
}

export interface CreditsServiceOptions {
  readonly orm: MikroORM;
  readonly pool: () => Promise<Pool>;
}

/** Largest single adjustment: far beyond any real grant, far below bigint and 2^53 trouble. */
export const MAX_ADJUSTMENT = 1_000_000_000;
const MAX_NOTE = 500;
export const MAX_LEDGER_PAGE = 100;

/**
 * Mail credits: one wallet per company, every change a ledger row written
 * in the same transaction. Each method takes the company id first.
 *
 * The send path uses hasCredits (the 402 check when a message is accepted),
 * chargeForMessage (at handoff) and refundMessage (permanent rejection);
 * the last two are idempotent per message, so workflow retries are safe.
 */
export class CreditsService {
  readonly #options: CreditsServiceOptions;

  constructor(options: CreditsServiceOptions) {
    this.#options = options;
  }

  /**
   * Adds `amount` credits (a grant), or with a negative amount removes them
   * (an adjustment); the balance never goes below zero (VALIDATION_ERROR,
   * nothing changes). Returns the new balance.
   */
  async adjust(companyId: string, amount: number, note: string): Promise<number> {
    if (!Number.isSafeInteger(amount) || amount === 0 || Math.abs(amount) > MAX_ADJUSTMENT) {
      throw new ValidationError([{ field: "amount", problem: `must be a non-zero whole number between -${MAX_ADJUSTMENT} and ${MAX_ADJUSTMENT}` }]);
    }
    const why = validNote(note);
    await this.#requireCompany(companyId);
    return inTransaction(await this.#options.pool(), async (client) => {
      const credits = new CreditRepository(client);
      await credits.ensureWalletForCompany(companyId);
      const balance = await credits.addToBalanceForCompany(companyId, amount);
      if (balance === null) {
        const current = await credits.balanceForCompany(companyId);
        throw new ValidationError([
          { field: "amount", problem: `would take the balance below zero (balance ${current}, amount ${amount})` },
        ]);
      }
      await credits.appendLedgerForCompany(companyId, { delta: amount, reason: amount > 0 ? "grant" : "adjustment", note: why });
      return balance;
    });
  }

  /** The current balance (0 without a wallet). */
  async balance(companyId: string): Promise<number> {
    return new CreditRepository(await this.#options.pool()).balanceForCompany(companyId);
  }

  /** At least one credit left: the check behind 402 INSUFFICIENT_CREDITS. */
  async hasCredits(companyId: string): Promise<boolean> {
    return (await this.balance(companyId)) >= 1;
  }

  /** The latest ledger entries, newest first (at most MAX_LEDGER_PAGE). */
  async ledger(companyId: string, limit = MAX_LEDGER_PAGE): Promise<LedgerEntry[]> {
    const size = Math.min(Math.max(1, Math.trunc(limit)), MAX_LEDGER_PAGE);
    return new CreditRepository(await this.#options.pool()).ledgerForCompany(companyId, size);
  }

  /** Balance and latest entries of an existing company (NOT_FOUND otherwise). */
  async wallet(companyId: string, limit = MAX_LEDGER_PAGE): Promise<Wallet> {
    await this.#requireCompany(companyId);
    const [balance, ledger] = await Promise.all([this.balance(companyId), this.ledger(companyId, limit)]);
    return { companyId, balance, ledger };
  }

  /**
   * Charges one credit for a message, at most once ever. One transaction:
   * the ledger row goes in first (a concurrent charge of the same message
   * waits on its unique index entry, then finds it and does nothing), then
   * the balance is decremented only if it is at least 1; if not, the
   * transaction is rolled back and nothing is recorded.
   */
  async chargeForMessage(companyId: string, messageId: string): Promise<ChargeOutcome> {
    requireIds(companyId, messageId);
    return inTransaction<ChargeOutcome>(await this.#options.pool(), async (client) => {
      const credits = new CreditRepository(client);
      if (!(await credits.appendLedgerForCompany(companyId, { delta: -1, reason: "charge", messageId }))) {
        if (!(await credits.hasMessageEntryForCompany(companyId, messageId, "charge"))) {
          // Message ids are ours and unique; this is a caller bug, not a state to report.
          throw new Error(`message ${messageId} was charged to another company`);
        }
        return rollback("already_charged");
      }
      const balance = await credits.addToBalanceForCompany(companyId, -1);
      return balance === null ? rollback("insufficient") : "charged";
    });
  }

  /**
   * Gives back the credit of a charged message, at most once (same
   * construction as chargeForMessage). A message that was never charged to
   * this company gets nothing.
   */
  async refundMessage(companyId: string, messageId: string): Promise<RefundOutcome> {
    requireIds(companyId, messageId);
    return inTransaction<RefundOutcome>(await this.#options.pool(), async (client) => {
      const credits = new CreditRepository(client);
      if (!(await credits.hasMessageEntryForCompany(companyId, messageId, "charge"))) return rollback("not_charged");
      if (!(await credits.appendLedgerForCompany(companyId, { delta: 1, reason: "refund", messageId }))) {
        return rollback("already_refunded");
      }
      // The wallet exists: the charge decremented it.
      if ((await credits.addToBalanceForCompany(companyId, 1)) === null) throw new Error(`no credit wallet for company ${companyId}`);
      return "refunded";
    });
  }

  async #requireCompany(companyId: string): Promise<void> {
    if (!(await new CompanyRepository(this.#options.orm.em.fork()).findById(companyId))) {
      throw new ApiError("NOT_FOUND", "No such company.");
    }
  }
}

function validNote(note: string): string {
  const text = typeof note === "string" ? note.trim() : "";
  if (text === "") throw new ValidationError([{ field: "note", problem: "must say why (it is kept in the ledger)" }]);
  if ([...text].length > MAX_NOTE) throw new ValidationError([{ field: "note", problem: `must be at most ${MAX_NOTE} characters` }]);
  return text;
}

/** Both ids come from our own send path; anything else is a programming error. */
function requireIds(companyId: string, messageId: string): void {
  if (!isUuid(companyId) || !isUuid(messageId)) throw new Error(`credits: companyId and messageId must be UUIDs`);
}
