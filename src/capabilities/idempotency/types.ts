import type { ErrorCodeName } from "../../contract/api-error.ts";

/**
 * One idempotent request: the caller's key, the RPC and what was asked.
 * Records are scoped by API key (the spec keeps the first answer "per API
 * key"): another key of the same company with the same Idempotency-Key is
 * another record. A send has no record: its key names the message for the
 * whole company, which is its only mechanism (messages/accept, MessageAcceptance).
 */
export interface IdempotencyScope {
  readonly apiKeyId: string;
  /** The `Idempotency-Key` header, validated at the door (an IdempotencyKey, parseIdempotencyKey). */
  readonly key: string;
  /** The operation, as the transport names it (`<service type name>/<method name>`, e.g. `mail.v1.MailService/UpsertContact`). */
  readonly rpc: string;
  /** The request's fingerprint (requestFingerprint; where the key was written does not count). */
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
  /**
   * An identical request holds the claim and has not answered yet. Its
   * lease ends in `leaseSecondsLeft` (at least 1): then the claim counts as
   * abandoned and the next identical request runs.
   */
  | { readonly kind: "in_progress"; readonly leaseSecondsLeft: number };

export type ClaimResult =
  /** The caller runs the request; `token` identifies this claim for complete/release. */
  | { readonly kind: "claimed"; readonly token: string }
  | ExistingRecord;
