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
  /** Whether the company exists (an id that cannot be a row id: false). */
  companyExists(companyId: string): Promise<boolean>;
  /** The balance; 0 when the company has no wallet yet. */
  balance(companyId: string): Promise<number>;
  /** The latest `limit` ledger entries, newest first. */
  ledger(companyId: string, limit: number): Promise<LedgerEntry[]>;
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
  charge(companyId: string, messageId: string): Promise<ChargeOutcome | "charged_elsewhere">;
  /** Gives back the credit of a message charged to this company, at most once. */
  refund(companyId: string, messageId: string): Promise<RefundOutcome>;
}
