import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { ChargeOutcome, CreditsStore, LedgerEntry, RefundOutcome } from "./ports.ts";
import { isUuid } from "../shared/uuid.ts";

export interface Wallet {
  readonly companyId: string;
  readonly balance: number;
  /** The latest entries, newest first. */
  readonly ledger: readonly LedgerEntry[];
}

export interface CreditsDependencies {
  readonly store: CreditsStore;
}

/** One company's wallet. */
export interface WalletQuery {
  readonly companyId: string;
}

/** The latest ledger entries of a company: at most `limit` (1 to MAX_LEDGER_PAGE, default MAX_LEDGER_PAGE). */
export interface LedgerQuery extends WalletQuery {
  readonly limit?: number | undefined;
}

/** An operator's grant (a positive amount) or adjustment (a negative one), with why. */
export interface AdjustCreditsCommand {
  readonly companyId: string;
  readonly amount: number;
  readonly note: string;
}

/** The credit of one message (charged at its handoff, given back on a permanent rejection). */
export interface MessageCreditCommand {
  readonly companyId: string;
  readonly messageId: string;
}

/** Largest single adjustment: far beyond any real grant, far below bigint and 2^53 trouble. */
export const MAX_ADJUSTMENT = 1_000_000_000;
const MAX_NOTE = 500;
export const MAX_LEDGER_PAGE = 100;

/**
 * Mail credits: one wallet per company, every change a ledger entry stored
 * with it.
 *
 * The send path uses hasCredits (the 402 check when a message is accepted),
 * chargeForMessage (at handoff) and refundMessage (permanent rejection);
 * the last two are idempotent per message, so workflow retries are safe.
 */
export class Credits {
  readonly #store: CreditsStore;

  constructor(deps: CreditsDependencies) {
    this.#store = deps.store;
  }

  /**
   * Adds `amount` credits (a grant), or with a negative amount removes them
   * (an adjustment); the balance never goes below zero (VALIDATION_ERROR,
   * nothing changes). Returns the new balance.
   */
  async adjust(command: AdjustCreditsCommand): Promise<number> {
    const { companyId, amount } = command;
    if (!Number.isSafeInteger(amount) || amount === 0 || Math.abs(amount) > MAX_ADJUSTMENT) {
      throw new ValidationError([{ field: "amount", problem: `must be a non-zero whole number between -${MAX_ADJUSTMENT} and ${MAX_ADJUSTMENT}` }]);
    }
    const why = validNote(command.note);
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
  async balance(query: WalletQuery): Promise<number> {
    return this.#store.balance(query.companyId);
  }

  /** At least one credit left: the check behind 402 INSUFFICIENT_CREDITS. */
  async hasCredits(query: WalletQuery): Promise<boolean> {
    return (await this.balance(query)) >= 1;
  }

  /** The latest ledger entries, newest first. */
  async ledger(query: LedgerQuery): Promise<LedgerEntry[]> {
    const size = Math.min(Math.max(1, Math.trunc(query.limit ?? MAX_LEDGER_PAGE)), MAX_LEDGER_PAGE);
    return this.#store.ledger(query.companyId, size);
  }

  /** Balance and latest entries of an existing company (NOT_FOUND otherwise). */
  async wallet(query: LedgerQuery): Promise<Wallet> {
    const { companyId } = query;
    await this.#requireCompany(companyId);
    const [balance, ledger] = await Promise.all([this.balance(query), this.ledger(query)]);
    return { companyId, balance, ledger };
  }

  /**
   * Charges one credit for a message, at most once ever; with less than one
   * credit left nothing is recorded (`insufficient`).
   */
  async chargeForMessage(command: MessageCreditCommand): Promise<ChargeOutcome> {
    const { companyId, messageId } = command;
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
  async refundMessage(command: MessageCreditCommand): Promise<RefundOutcome> {
    requireIds(command.companyId, command.messageId);
    return this.#store.refund(command.companyId, command.messageId);
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
  if (!isUuid(companyId) || !isUuid(messageId)) throw new Error(`credits: companyId and messageId must be UUIDs`);
}
