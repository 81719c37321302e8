export {
  type AdjustCreditsCommand,
  Credits,
  type CreditsDependencies,
  type LedgerQuery,
  MAX_ADJUSTMENT,
  MAX_LEDGER_PAGE,
  type MessageCreditCommand,
  type Wallet,
  type WalletQuery,
} from "./credits.ts";
export type {
  AdjustResult,
  BalanceChange,
  ChargeOutcome,
  CreditsStore,
  LedgerEntry,
  LedgerReason,
  RefundOutcome,
} from "./ports.ts";
