/** Outcome of taking one request from a key's budget. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** The budget of the window (x-ratelimit-limit). */
  readonly limit: number;
  /** Requests left in the window after this one (x-ratelimit-remaining, never negative). */
  readonly remaining: number;
  /** Seconds until the window resets (x-ratelimit-reset). */
  readonly resetSeconds: number;
  /** Seconds to wait before retrying; set when not allowed (retry-after). */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Takes one request from the budget of `bucket` (for example
   * `<keyId>:default` or `<keyId>:conversions`). The count is shared by every
   * API process using the same database.
   */
  consume(bucket: string, limitPerMinute: number): Promise<RateLimitDecision>;
}
