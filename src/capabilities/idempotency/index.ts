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
export {
  bodyKeyField,
  canonicalJson,
  idempotentRequestFingerprint,
  requestFingerprint,
  SEND_MESSAGE_RPC,
  sendRequestFingerprint,
} from "./fingerprint.ts";
export { type IdempotencyKey, NO_SEND_KEY, parseIdempotencyKey, readSendKey, type SendKey } from "./idempotency-key.ts";
export { storableHeaders } from "./answer-headers.ts";
export { holdsSecrets, IDEMPOTENT_REDACTED_HEADER, isSecretField, withoutSecrets } from "./secret-fields.ts";
