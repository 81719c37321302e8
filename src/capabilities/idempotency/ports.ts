import type { ClaimResult, ExistingRecord, IdempotencyScope, StoredAnswer } from "./types.ts";

/**
 * Where idempotency records are kept, shared by every API process (the
 * PostgreSQL store is in src/adapters/postgres/idempotency/).
 */
export interface IdempotencyStore {
  /**
   * Claims the key atomically: inserts an in-progress record leased for
   * `leaseSeconds`, or takes over one that expired (an answer past the
   * window, or a claim past its lease: its request died before it could
   * answer or drop the claim), or reports the record that is there. Of
   * concurrent claims exactly one gets `claimed`.
   */
  claim(scope: IdempotencyScope, leaseSeconds: number): Promise<ClaimResult>;
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
