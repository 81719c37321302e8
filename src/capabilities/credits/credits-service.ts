import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { ChargeOutcome, CreditsStore, LedgerEntry, RefundOutcome } from "./ports.ts";

export interface Wallet {
  readonly companyId: string;
  readonly balance: number;
  /** The latest entries, newest first. */
  readonly ledger: readonly LedgerEntry[];
}

export interface CreditsServiceOptions {
  readonly store: CreditsStore;
}

/** Largest single adjustment: far beyond any real grant, far below bigint and 2^53 trouble. */
export const MAX_ADJUSTMENT = 1_000_000_000;
const MAX_NOTE = 500;
export const MAX_LEDGER_PAGE = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Mail credits: one wallet per company, every change a ledger entry stored
 * with it. Each method takes the company id first.
 *
 * The send path uses hasCredits (the 402 check when a message is accepted),
 * chargeForMessage (at handoff) and refundMessage (permanent rejection);
 * the last two are idempotent per message, so workflow retries are safe.
 */
export class CreditsService {
  readonly #store: CreditsStore;

  constructor(options: CreditsServiceOptions) {
    this.#store = options.store;
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
    const result = await this.#store.adjust(companyId, { delta: amount, reason: amount > 0 ? "grant" : "adjustment", note: why });
    if (result.kind === "below_zero") {
      throw new ValidationError([
        { field: "amount", problem: `would take the balance below zero (balance ${result.balance}, amount ${amount})` },
      ]);
    }
    return result.balance;
  }

  /** The current balance (0 without a wallet). */
  async balance(companyId: string): Promise<number> {
    return this.#store.balance(companyId);
  }

  /** At least one credit left: the check behind 402 INSUFFICIENT_CREDITS. */
  async hasCredits(companyId: string): Promise<boolean> {
    return (await this.balance(companyId)) >= 1;
  }

  /** The latest ledger entries, newest first (at most MAX_LEDGER_PAGE). */
  async ledger(companyId: string, limit = MAX_LEDGER_PAGE): Promise<LedgerEntry[]> {
    const size = Math.min(Math.max(1, Math.trunc(limit)), MAX_LEDGER_PAGE);
    return this.#store.ledger(companyId, size);
  }

  /** Balance and latest entries of an existing company (NOT_FOUND otherwise). */
  async wallet(companyId: string, limit = MAX_LEDGER_PAGE): Promise<Wallet> {
    await this.#requireCompany(companyId);
    const [balance, ledger] = await Promise.all([this.balance(companyId), this.ledger(companyId, limit)]);
    return { companyId, balance, ledger };
  }

  /**
   * Charges one credit for a message, at most once ever; with less than one
   * credit left nothing is recorded (`insufficient`).
   */
  async chargeForMessage(companyId: string, messageId: string): Promise<ChargeOutcome> {
    requireIds(companyId, messageId);
    const outcome = await this.#store.charge(companyId, messageId);
    // Message ids are ours and unique; this is a caller bug, not a state to report.
    if (outcome === "charged_elsewhere") throw new Error(`message ${messageId} was charged to another company`);
    return outcome;
  }

  /**
   * Gives back the credit of a charged message, at most once. A message
   * that was never charged to this company gets nothing.
   */
  async refundMessage(companyId: string, messageId: string): Promise<RefundOutcome> {
    requireIds(companyId, messageId);
    return this.#store.refund(companyId, messageId);
  }

  async #requireCompany(companyId: string): Promise<void> {
    if (!(await this.#store.companyExists(companyId))) throw new ApiError("NOT_FOUND", "No such company.");
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
  if (!UUID.test(companyId) || !UUID.test(messageId)) throw new Error(`credits: companyId and messageId must be UUIDs`);
}
