/**
 * What the credits capability needs from storage. The PostgreSQL
 * implementation is src/adapters/postgres/credits/postgres-credits-store.ts.
 *
 * TENANT ISOLATION: every method takes the company id first and reads or
 * changes that company's wallet and ledger only.
 *
 * Every change is atomic: a balance change and its ledger entry are stored
 * together or not at all, and concurrent changes never overdraw a wallet or
 * charge (or refund) one message twice.
 */
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";

export type LedgerReason = "grant" | "adjustment" | "charge" | "refund";

export interface LedgerEntry {
  readonly id: number;
  readonly delta: number;
  readonly reason: LedgerReason;
  readonly messageId: string | null;
  readonly note: string;
  readonly createdAt: Date;
}

export type ChargeOutcome = "charged" | "already_charged" | "insufficient";

/** What a charge did; a charge that took a credit says the balance it left. */
export type ChargeResult =
  | { readonly outcome: "charged"; readonly balance: number }
  | { readonly outcome: "already_charged" | "insufficient" | "charged_elsewhere" };
export type RefundOutcome = "refunded" | "already_refunded" | "not_charged";

/** An operator's change of a balance: a grant (positive) or an adjustment (negative). */
export interface BalanceChange {
  readonly delta: number;
  readonly reason: "grant" | "adjustment";
  readonly note: string;
}

export type AdjustResult =
  | { readonly kind: "applied"; readonly balance: number }
  /** Nothing changed; `balance` is the current one. */
  | { readonly kind: "below_zero"; readonly balance: number };

export interface CreditsStore {
  /** The company's name; undefined when there is no such company (or the id cannot be a row id). */
  companyName(companyId: string): Promise<string | undefined>;
  /** The balance; 0 when the company has no wallet yet. */
  balance(companyId: string): Promise<number>;
  /**
   * The company's ledger entries (only those of `reason`, when given),
   * newest first, strictly after `after`; at most `limit`, each with its
   * position (the entry's id is the position's id).
   */
  ledger(companyId: string, reason: LedgerReason | undefined, after: KeysetPosition | null, limit: number): Promise<Positioned<LedgerEntry>[]>;
  /**
   * Changes the balance by `change.delta` with its ledger entry, creating
   * the wallet when there is none, unless the balance would go below zero:
   * then nothing at all is written.
   */
  adjust(companyId: string, change: BalanceChange): Promise<AdjustResult>;
  /**
   * Charges one credit for the message, at most once ever. With less than
   * one credit nothing is written (`insufficient`); `charged_elsewhere` when
   * the message is already charged to another company.
   */
  charge(companyId: string, messageId: string): Promise<ChargeResult>;
  /** Gives back the credit of a message charged to this company, at most once. */
  refund(companyId: string, messageId: string): Promise<RefundOutcome>;
}

/**
 * Tells a company's owners that its credits are low. Answers true once the
 * notice is done with (sent, or nothing can be sent: no owner, no system
 * sender), false when it failed and a later charge should try again.
 */
export interface LowCreditsAlert {
  creditsLow(notice: LowCreditsNotice): Promise<boolean>;
}

export interface LowCreditsNotice {
  readonly companyId: string;
  readonly companyName: string;
  readonly balance: number;
  readonly threshold: number;
  readonly at: Date;
}
