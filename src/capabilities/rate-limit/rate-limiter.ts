import type { RateLimitWindows } from "./ports.ts";
import type { ConsumeCommand, RateLimitDecision, RateLimiter } from "./types.ts";

/**
 * A budget of `limitPerMinute` requests per bucket and one-minute window.
 * Refused requests count too; that changes nothing, they are over the limit
 * anyway.
 */
export class FixedWindowRateLimiter implements RateLimiter {
  readonly #windows: RateLimitWindows;

  constructor(windows: RateLimitWindows) {
    this.#windows = windows;
  }

  async consume({ bucket, limitPerMinute }: ConsumeCommand): Promise<RateLimitDecision> {
    if (bucket === "") throw new Error("rate limit bucket must not be empty");
    if (!Number.isInteger(limitPerMinute) || limitPerMinute < 1) {
      throw new Error(`rate limit must be a positive integer, got ${limitPerMinute}`);
    }
    const { count, resetMs } = await this.#windows.add(bucket);
    const allowed = count <= limitPerMinute;
    // Whole seconds, rounded up, at least 1: "retry after 0 s" would invite a busy loop.
    const resetSeconds = Math.min(60, Math.max(1, Math.ceil(resetMs / 1000)));
    return {
      allowed,
      limit: limitPerMinute,
      remaining: Math.max(0, limitPerMinute - count),
      resetSeconds,
      retryAfterSeconds: allowed ? 0 : resetSeconds,
    };
  }

  /** Stops the store's background work. */
  close(): Promise<void> {
    return this.#windows.close();
  }
}
