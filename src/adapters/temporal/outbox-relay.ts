/**
 * The loop of an outbox relay: passes over an outbox table that start the
 * workflows of its rows (the message dispatcher's and the webhook
 * dispatcher's; each says what a pass does). A pass runs every `intervalMs`
 * after the previous one ended; a wake-up (`wakeUps`: PostgreSQL NOTIFY;
 * `kick()` in this process) runs one now, and wake-ups during a pass are
 * folded into one more pass after it. A pass that fails is logged and
 * simply done again by a later one: every step of a pass is idempotent.
 */
export interface OutboxRelayOptions {
  /** One pass over the outbox. */
  readonly pass: () => Promise<unknown>;
  /** Pause between the end of a pass and the next one. */
  readonly intervalMs: number;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /** The warning a failed pass is logged with. */
  readonly failure: string;
  /**
   * Opened by start(), closed by close(): calls `wake` whenever there may be
   * work, which runs a pass now. Optional: without it the relay polls.
   */
  readonly wakeUps?: ((wake: () => void) => { close(): Promise<void> }) | undefined;
}

export class OutboxRelay {
  readonly #options: OutboxRelayOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #again = false;
  #looping = false;
  #stopped = false;
  #wakeUps: { close(): Promise<void> } | undefined;

  constructor(options: OutboxRelayOptions) {
    this.#options = options;
  }

  /** Runs passes until close(), the first one intervalMs from now. */
  start(): void {
    if (this.#looping || this.#stopped) return;
    this.#looping = true;
    this.#wakeUps = this.#options.wakeUps?.(() => this.kick());
    if (!this.#timer && !this.#running) this.#schedule(this.#options.intervalMs);
  }

  /** A pass now; if one is under way, another follows it. Nothing before start() or after close(). */
  kick(): void {
    if (this.#stopped || !this.#looping) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#schedule(0);
  }

  /** Stops the loop and its wake-ups, after the pass under way. */
  async close(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const wakeUps = this.#wakeUps;
    this.#wakeUps = undefined;
    await wakeUps?.close();
    await this.#running;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#options
        .pass()
        .catch((error: unknown) => this.#options.log.warn({ err: error }, this.#options.failure))
        .finally(() => {
          this.#running = undefined;
          if (this.#stopped) return;
          const again = this.#again;
          this.#again = false;
          this.#schedule(again ? 0 : this.#options.intervalMs);
        });
    }, delayMs);
    this.#timer.unref();
  }
}
