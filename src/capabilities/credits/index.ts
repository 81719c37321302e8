export { CreditsService, MAX_ADJUSTMENT, MAX_LEDGER_PAGE, type CreditsServiceOptions, type Wallet } from "./credits-service.ts";
export type {
  AdjustResult,
  BalanceChange,
  ChargeOutcome,
  CreditsStore,
  LedgerEntry,
  LedgerReason,
  RefundOutcome,
} from "./ports.ts";
