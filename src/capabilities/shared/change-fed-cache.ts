/**
 * A short-lived cache of reads that must never outlive a change: the API
 * key lookup (../accounts/cached-credentials.ts) and a send's sender check
 * (../messages/accept/cached-senders.ts).
 *
 * Whoever knows of a change calls `invalidateAll`: the process that makes
 * it, before it answers, and a feed of committed changes for the others
 * (PostgreSQL NOTIFY, src/adapters/postgres/change-feed.ts).
 * While that feed is not known to work the cache is off (`setEnabled`), so
 * a lost notification cannot keep a stale value alive; `ttlMs` bounds a
 * notification lost on a connection that still looks alive. A read that
 * overlapped an invalidation is not kept (it may predate the change).
 */
export interface ChangeFedCacheOptions {
  /** How long a value is used at most. Default 10 000 ms; 0 turns the cache off. */
  readonly ttlMs?: number;
  /** Values kept at most; the oldest go first. Default 10 000. */
  readonly maxEntries?: number;
  /** Milliseconds now (tests pass a fake clock). */
  readonly now?: () => number;
  /** Whether the change feed works from the start (default false: off until it says so). */
  readonly enabled?: boolean;
}

export const DEFAULT_CACHE_TTL_MS = 10_000;

interface Entry<V> {
  readonly value: V;
  readonly until: number;
}

export class ChangeFedCache<V> {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry<V>>();
  /** Changes on every invalidation: a read that overlapped one is not kept. */
  #generation = 0;
  #enabled: boolean;

  constructor(options: ChangeFedCacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_CACHE_TTL_MS;
    this.#maxEntries = Math.max(1, options.maxEntries ?? 10_000);
    this.#now = options.now ?? Date.now;
    this.#enabled = options.enabled ?? false;
  }

  /** The fresh cached value of `key`, else `read()`'s, kept when `keep` says so (e.g. only what was found). */
  async get(key: string, read: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    if (!this.#enabled || this.#ttlMs <= 0) return read();
    const cached = this.#entries.get(key);
    if (cached && cached.until > this.#now()) return cached.value;
    if (cached) this.#entries.delete(key);

    const generation = this.#generation;
    const value = await read();
    if (keep(value) && this.#enabled && generation === this.#generation) {
      if (this.#entries.size >= this.#maxEntries) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      this.#entries.set(key, { value, until: this.#now() + this.#ttlMs });
    }
    return value;
  }

  /** Forgets every cached value (something they depend on changed). */
  invalidateAll(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** On once changes are known to be heard, off (and empty) when they may not be. */
  setEnabled(enabled: boolean): void {
    this.invalidateAll();
    this.#enabled = enabled;
  }
}
