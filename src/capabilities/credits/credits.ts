import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { KeysetCursorKind } from "../shared/keyset-cursor.ts";
import { filterFingerprint, KeysetPager, type Page, type PageRequest, pageSize, refuseProblems } from "../shared/paging.ts";
import type { ChargeOutcome, CreditsStore, LedgerEntry, LedgerReason, LowCreditsAlert, LowCreditsNotice, RefundOutcome } from "./ports.ts";
import { isUuid } from "../shared/uuid.ts";

export interface CreditsDependencies {
  readonly store: CreditsStore;
  /** Secret of the ledger's cursors. */
  readonly cursorSecret: string;
  /** Below this balance the credits are low (LOW_CREDITS_THRESHOLD); 0: never low. */
  readonly lowThreshold: number;
  /** Tells the owners when a charge leaves the balance low; none: nobody is told. */
  readonly lowCreditsAlert?: LowCreditsAlert | undefined;
  readonly clock?: () => Date;
}

/** One company's wallet. */
export interface WalletQuery {
  readonly companyId: string;
}

/** The balance, and whether it is low. */
export interface CreditsSummary {
  readonly balance: number;
  /** Below this the balance is low (0: never). */
  readonly lowThreshold: number;
  readonly low: boolean;
}

/** A page of the ledger, newest first. */
export interface ListLedgerCommand extends PageRequest {
  readonly companyId: string;
  readonly reason?: LedgerReason | undefined;
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
export const LEDGER_REASONS: readonly LedgerReason[] = ["charge", "refund", "grant", "adjustment"];

/** The ledger's cursors: positions are (created_at, entry id); entries are numbered as written. */
export const LEDGER_CURSOR: KeysetCursorKind = { context: "mail.v1.credit-ledger.cursor.v1", label: "credit ledger", filters: "reason", id: "serial" };

/**
 * Mail credits: one wallet per company, every change a ledger entry stored
 * with it.
 *
 * The send path uses hasCredits (the 402 check when a message is accepted),
 * chargeForMessage (at handoff) and refundMessage (permanent rejection);
 * the last two are idempotent per message, so workflow retries are safe. A
 * charge that leaves the balance below the low threshold tells the owners,
 * at most once a day per company (the owner notices key each email by the
 * day; this process also remembers the day it told them, so later charges
 * that day cost nothing).
 */
export class Credits {
  readonly #store: CreditsStore;
  readonly #pager: KeysetPager;
  readonly #lowThreshold: number;
  readonly #alert: LowCreditsAlert | undefined;
  readonly #clock: () => Date;
  /** Company -> the UTC day its owners were last told, in this process. */
  readonly #toldOn = new Map<string, string>();

  constructor(deps: CreditsDependencies) {
    this.#store = deps.store;
    this.#pager = new KeysetPager(deps.cursorSecret, LEDGER_CURSOR);
    this.#lowThreshold = deps.lowThreshold;
    this.#alert = deps.lowCreditsAlert;
    this.#clock = deps.clock ?? (() => new Date());
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
    if ((await this.#store.companyName(companyId)) === undefined) throw new ApiError("NOT_FOUND", "No such company.");
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

  /** The balance with the low threshold and whether it is below it. */
  async summary(query: WalletQuery): Promise<CreditsSummary> {
    const balance = await this.balance(query);
    return { balance, lowThreshold: this.#lowThreshold, low: this.#isLow(balance) };
  }

  /** At least one credit left: the check behind 402 INSUFFICIENT_CREDITS. */
  async hasCredits(query: WalletQuery): Promise<boolean> {
    return (await this.balance(query)) >= 1;
  }

  /** The ledger, newest first, one page at a time (only entries of `reason`, when given). */
  async ledger(command: ListLedgerCommand): Promise<Page<LedgerEntry>> {
    const { companyId, reason } = command;
    const problems: FieldProblem[] = [];
    const size = pageSize(command.limit, problems);
    if (reason !== undefined && !LEDGER_REASONS.includes(reason)) problems.push({ field: "reason", problem: `must be one of ${LEDGER_REASONS.join(", ")}` });
    refuseProblems(problems);
    const fingerprint = filterFingerprint([reason]);
    const after = this.#pager.after(companyId, fingerprint, command.cursor);
    return this.#pager.page(companyId, fingerprint, await this.#store.ledger(companyId, reason, after, size + 1), size);
  }

  /**
   * Charges one credit for a message, at most once ever; with less than one
   * credit left nothing is recorded (`insufficient`). A charge that leaves
   * the balance low tells the owners (see the class).
   */
  async chargeForMessage(command: MessageCreditCommand): Promise<ChargeOutcome> {
    const { companyId, messageId } = command;
    requireIds(companyId, messageId);
    const result = await this.#store.charge(companyId, messageId);
    // Message ids are ours and unique; this is a caller bug, not a state to report.
    if (result.outcome === "charged_elsewhere") throw new Error(`message ${messageId} was charged to another company`);
    if (result.outcome === "charged" && this.#isLow(result.balance)) await this.#tellOwners(companyId, result.balance);
    return result.outcome;
  }

  /**
   * Gives back the credit of a charged message, at most once. A message
   * that was never charged to this company gets nothing.
   */
  async refundMessage(command: MessageCreditCommand): Promise<RefundOutcome> {
    requireIds(command.companyId, command.messageId);
    return this.#store.refund(command.companyId, command.messageId);
  }

  #isLow(balance: number): boolean {
    return balance < this.#lowThreshold;
  }

  /** Once a day per company and process; a notice that failed is tried again by the next charge. */
  async #tellOwners(companyId: string, balance: number): Promise<void> {
    if (!this.#alert) return;
    const at = this.#clock();
    const day = at.toISOString().slice(0, 10);
    if (this.#toldOn.get(companyId) === day) return;
    const companyName = (await this.#store.companyName(companyId)) ?? "";
    if (await this.#alert.creditsLow({ companyId, companyName, balance, threshold: this.#lowThreshold, at })) {
      // Only today's entries matter: the map never grows past the companies told today.
      for (const [company, toldDay] of this.#toldOn) if (toldDay !== day) this.#toldOn.delete(company);
      this.#toldOn.set(companyId, day);
    }
  }
}

/** The owners' email about low credits: what happened, and where to look. */
export function lowCreditsEmail(notice: LowCreditsNotice): { readonly subject: string; readonly paragraphs: readonly string[]; readonly screenPath: string } {
  const left = notice.balance === 1 ? "1 Mail credit is left" : `${notice.balance} Mail credits are left`;
  return {
    subject: `Mail credits are low: ${notice.balance} left`,
    paragraphs: [
      `${left} for ${notice.companyName || "your company"} (the low-balance mark is ${notice.threshold}). Each message uses one credit.`,
      "When the credits run out, new sends are refused (402 INSUFFICIENT_CREDITS) and queued messages fail with MAIL_CREDITS_EXHAUSTED. Ask your Mail provider for more credits.",
      "The Credits page shows the balance and every charge, refund and grant. This email is sent at most once a day.",
    ],
    screenPath: "/admin/credits",
  };
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
