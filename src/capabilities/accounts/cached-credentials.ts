import type { ApiKeyCredentials, KeyCredential } from "./ports.ts";

/**
 * A short-lived cache of the key lookup behind authentication (the hash of
 * a presented key -> the key and its company), so a busy key costs no
 * database read on most requests.
 *
 * Revocation is honoured: every change that could refuse a key (revoked,
 * expiry or rotation, scopes, name, its company's entitlements, a deleted
 * key or company) empties the cache at once, in every process:
 * - in the process that makes the change, before its answer (`invalidateAll`);
 * - in the others, when PostgreSQL tells them (a trigger NOTIFYs on commit,
 *   src/adapters/postgres/accounts/credential-changes.ts), within moments.
 * While that feed is not known to work (not yet listening, connection lost),
 * the cache is off and every request reads the database, so a lost
 * notification cannot keep a revoked key alive. `ttlMs` bounds the rest: a
 * notification lost on a connection that still looks alive is outlived by
 * at most `ttlMs` (default 10 s). Only keys found are cached; an unknown key
 * is read again every time. Expiry by time is checked on every call by the
 * authenticator against the cached expiry, so it needs no notification.
 */
export interface CachedCredentialsOptions {
  /** How long a cached lookup is used at most. Default 10 000 ms. */
  readonly ttlMs?: number;
  /** Keys kept at most; the oldest go first. Default 10 000. */
  readonly maxEntries?: number;
  /** Milliseconds now (tests pass a fake clock). */
  readonly now?: () => number;
  /** Whether the change feed works from the start (default false: off until it says so). */
  readonly enabled?: boolean;
}

export const DEFAULT_CREDENTIALS_TTL_MS = 10_000;

interface Entry {
  readonly credential: KeyCredential;
  readonly until: number;
}

export class CachedApiKeyCredentials implements ApiKeyCredentials {
  readonly #inner: ApiKeyCredentials;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  /** Changes on every invalidation: a lookup that overlapped one is not kept. */
  #generation = 0;
  #enabled: boolean;

  constructor(inner: ApiKeyCredentials, options: CachedCredentialsOptions = {}) {
    this.#inner = inner;
    this.#ttlMs = options.ttlMs ?? DEFAULT_CREDENTIALS_TTL_MS;
    this.#maxEntries = Math.max(1, options.maxEntries ?? 10_000);
    this.#now = options.now ?? Date.now;
    this.#enabled = options.enabled ?? false;
  }

  async findByHash(secretHash: Buffer): Promise<KeyCredential | null> {
    if (!this.#enabled || this.#ttlMs <= 0) return this.#inner.findByHash(secretHash);
    const cacheKey = secretHash.toString("base64");
    const cached = this.#entries.get(cacheKey);
    if (cached && cached.until > this.#now()) return cached.credential;
    if (cached) this.#entries.delete(cacheKey);

    const generation = this.#generation;
    const credential = await this.#inner.findByHash(secretHash);
    // A change announced while this read was under way may not be in it.
    if (credential && this.#enabled && generation === this.#generation) {
      if (this.#entries.size >= this.#maxEntries) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      this.#entries.set(cacheKey, { credential, until: this.#now() + this.#ttlMs });
    }
    return credential;
  }

  /** Forgets every cached lookup (a key or company changed). */
  invalidateAll(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** Turns the cache on once changes are known to be heard, off (and empty) when they may not be. */
  setEnabled(enabled: boolean): void {
    this.invalidateAll();
    this.#enabled = enabled;
  }
}
