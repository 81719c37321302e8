import type { KeyUsageStore } from "./ports.ts";

/** Where "last used" times go; the authenticator only knows this. */
export interface KeyUsageRecorder {
  record(keyId: string, at: Date): void;
}

export interface KeyUsageBatcherOptions {
  /** How often pending times are written (config.keyUsageFlushMs). 0: right after each record. */
  readonly flushMs: number;
  /** Failures of background flushes (the times stay pending and are retried). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Writes "last used" of API keys in batches, so authenticating a request
 * never writes: requests only update an in-memory map (key id -> latest
 * time), and every `flushMs` one write of the store takes the whole map.
 *
 * The store only moves "last used" forward, so several API processes
 * flushing in any order never move it back. A failed flush keeps
 * its times for the next one. Call `close()` on shutdown to write the rest.
 */
export class KeyUsageBatcher implements KeyUsageRecorder {
  readonly #store: KeyUsageStore;
  readonly #flushMs: number;
  readonly #onError: (error: unknown) => void;
  #pending = new Map<string, Date>();
  #timer: NodeJS.Timeout | undefined;
  /** The flush in progress; flushes run one at a time. */
  #inFlight: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(store: KeyUsageStore, options: KeyUsageBatcherOptions) {
    this.#store = store;
    this.#flushMs = options.flushMs;
    this.#onError = options.onError ?? ((error) => console.error("api key usage flush failed", error));
    if (this.#flushMs > 0) {
      this.#timer = setInterval(() => this.#flushInBackground(), this.#flushMs);
      // Never keeps the process alive on its own; close() writes the rest.
      this.#timer.unref();
    }
  }

  /** Number of keys waiting to be written. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  record(keyId: string, at: Date): void {
    if (this.#closed) return;
    const previous = this.#pending.get(keyId);
    if (!previous || previous < at) this.#pending.set(keyId, at);
    if (this.#flushMs <= 0) this.#flushInBackground();
  }

  /** Writes everything pending now, in one write of the store. Rejects when the write fails. */
  flush(): Promise<void> {
    const run = this.#inFlight.then(() => this.#write());
    // Later flushes wait for this one, whatever its outcome.
    this.#inFlight = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  #flushInBackground(): void {
    if (this.#pending.size === 0) return;
    this.flush().catch((error: unknown) => this.#onError(error));
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    try {
      await this.#store.writeLastUsed(batch);
    } catch (error) {
      // Put the times back (unless newer ones arrived meanwhile) for the next flush.
      for (const [id, at] of batch) {
        const newer = this.#pending.get(id);
        if (!newer || newer < at) this.#pending.set(id, at);
      }
      throw error;
    }
  }
}
