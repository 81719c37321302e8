import { ChangeFedCache, type ChangeFedCacheOptions, DEFAULT_CACHE_TTL_MS } from "../shared/change-fed-cache.ts";
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
 * The mechanics are ../shared/change-fed-cache.ts.
 */
export type CachedCredentialsOptions = ChangeFedCacheOptions;

export const DEFAULT_CREDENTIALS_TTL_MS = DEFAULT_CACHE_TTL_MS;

export class CachedApiKeyCredentials implements ApiKeyCredentials {
  readonly #inner: ApiKeyCredentials;
  readonly #cache: ChangeFedCache<KeyCredential | null>;

  constructor(inner: ApiKeyCredentials, options: CachedCredentialsOptions = {}) {
    this.#inner = inner;
    this.#cache = new ChangeFedCache(options);
  }

  findByHash(secretHash: Buffer): Promise<KeyCredential | null> {
    return this.#cache.get(secretHash.toString("base64"), () => this.#inner.findByHash(secretHash), (credential) => credential !== null);
  }

  /** Forgets every cached lookup (a key or company changed). */
  invalidateAll(): void {
    this.#cache.invalidateAll();
  }

  /** Turns the cache on once changes are known to be heard, off (and empty) when they may not be. */
  setEnabled(enabled: boolean): void {
    this.#cache.setEnabled(enabled);
  }
}
