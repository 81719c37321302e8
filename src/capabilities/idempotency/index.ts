export type { ClaimResult, ExistingRecord, IdempotencyScope, StoredAnswer } from "./types.ts";
export type { IdempotencyStore } from "./ports.ts";
export {
  DEFAULT_LEASE_SECONDS,
  IdempotencyGuard,
  LEASE_MARGIN_SECONDS,
  type ExecuteOptions,
  type Execution,
  type FreshAnswer,
  type IdempotencyGuardOptions,
} from "./idempotency-guard.ts";
export { canonicalJson, requestFingerprint } from "./fingerprint.ts";
export { type IdempotencyKey, parseIdempotencyKey, readSendKey, type SendKey } from "./idempotency-key.ts";
export { storableHeaders } from "./answer-headers.ts";
