import type { ErrorCodeName } from "../../contract/api-error.ts";

/**
 * One idempotent request: the caller's key, the RPC and what was asked.
 * Records are scoped by API key (the spec keeps the first answer "per API
 * key"): another key of the same company with the same Idempotency-Key is
 * another record.
 */
export interface IdempotencyScope {
  readonly apiKeyId: string;
  /** The validated `Idempotency-Key` value. */
  readonly key: string;
  /** `<service type name>/<method name>`, e.g. `mail.v1.MailService/SendMessage`. */
  readonly rpc: string;
  /** requestFingerprint() of the request message. */
  readonly requestHash: Uint8Array;
}

/** The first answer, as kept for replays. */
export type StoredAnswer =
  | {
      readonly kind: "response";
      /** Protobuf binary of the response message. */
      readonly response: Uint8Array;
      /** Answer headers the handler set (never protocol or per-request ones). */
      readonly headers: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: "error";
      readonly code: ErrorCodeName;
      readonly message: string;
      readonly headers: Readonly<Record<string, string>>;
    };

/** What the store found for a scope, other than a claim of our own. */
export type ExistingRecord =
  /** Same key, another body or another RPC. */
  | { readonly kind: "mismatch" }
  | { readonly kind: "completed"; readonly answer: StoredAnswer }
  /** An identical request holds the claim and has not answered yet. */
  | { readonly kind: "in_progress" };

export type ClaimResult =
  /** The caller runs the request; `token` identifies this claim for complete/release. */
  | { readonly kind: "claimed"; readonly token: string }
  | ExistingRecord;

export interface IdempotencyStore {
  /**
   * Claims the key atomically: inserts an in-progress record, or takes over
   * one that expired (or whose claim went stale), or reports the record that
   * is there. Of concurrent claims exactly one gets `claimed`.
   */
  claim(scope: IdempotencyScope): Promise<ClaimResult>;
  /** The record as it is now, without claiming; `absent` when gone or reclaimable. */
  inspect(scope: IdempotencyScope): Promise<ExistingRecord | { readonly kind: "absent" }>;
  /**
   * Stores the answer of the claim `token`. False when the claim is no longer
   * ours (it went stale and another request took the key over).
   */
  complete(scope: IdempotencyScope, token: string, answer: StoredAnswer): Promise<boolean>;
  /** Drops the claim `token` so that a retry runs the request again. */
  release(scope: IdempotencyScope, token: string): Promise<void>;
  /** Stops background work (call before closing the database). */
  close(): Promise<void>;
}
