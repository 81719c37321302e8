export {
  crossedLine,
  formatPercent,
  GUARD_WINDOW_MS,
  type LiftSuspensionCommand,
  type LiftSuspensionResult,
  type OutcomeRecordedCommand,
  percentOf,
  SendingGuard,
  type SendingGuardDependencies,
  type SendingStatus,
  type SendingStatusQuery,
  suspensionEmail,
} from "./sending-guard.ts";
export type { GuardLimits, GuardState, SendingGuardStore, Suspension, SuspensionAlert, SuspensionNotice, SuspensionReason, WindowFigures } from "./ports.ts";
