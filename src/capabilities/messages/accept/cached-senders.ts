import { ChangeFedCache, type ChangeFedCacheOptions } from "../../shared/change-fed-cache.ts";
import type { ResolvedSenderInfo, SenderDirectoryPort } from "./ports.ts";

/**
 * The sender check of accepting a send (the company's chosen or default
 * sender, verified), kept for a few seconds per company and sender id, so a
 * busy company's sends cost no sender read on most requests.
 *
 * Like the API key cache (src/capabilities/accounts/cached-credentials.ts;
 * the mechanics are ../../shared/change-fed-cache.ts): every change of a
 * sender or of a sending domain empties it, in the process that makes the
 * change before it answers (SendersDependencies.onSendersChanged) and in
 * every other one within moments (PostgreSQL NOTIFY,
 * src/adapters/postgres/sending-setup/sender-changes.ts); while that feed is
 * not known to work the cache is off; `ttlMs` (default 10 s) bounds a
 * notification lost on a connection that still looks alive. Only senders
 * that may send are kept: a refusal (404, 409 SENDER_NOT_VERIFIED) is
 * checked again on the next send. The handoff checks the sender again
 * (SigningKeysPort.resolveSender, never cached), so a message accepted in
 * the moment after its sender went away fails as SENDING_SUSPENDED and is
 * refunded.
 */
export type CachedSendersOptions = Omit<ChangeFedCacheOptions, "enabled">;

export class CachedSenderDirectory implements SenderDirectoryPort {
  readonly #inner: SenderDirectoryPort;
  readonly #cache: ChangeFedCache<ResolvedSenderInfo>;

  constructor(inner: SenderDirectoryPort, options: CachedSendersOptions = {}) {
    this.#inner = inner;
    this.#cache = new ChangeFedCache(options);
  }

  checkSender(companyId: string, senderId?: string): Promise<ResolvedSenderInfo> {
    // Proto3 has no "absent" string: an empty sender id is the default sender, as the directory reads it.
    // A refusal is thrown, so never kept.
    return this.#cache.get(`${companyId}/${senderId ?? ""}`, () => this.#inner.checkSender(companyId, senderId));
  }

  /** Forgets every cached check (a sender or a domain changed). */
  invalidateAll(): void {
    this.#cache.invalidateAll();
  }

  /** On once changes are known to be heard, off (and empty) when they may not be. */
  setEnabled(enabled: boolean): void {
    this.#cache.setEnabled(enabled);
  }
}
