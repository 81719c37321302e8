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

/** One request to take from a bucket's budget. */
export interface ConsumeCommand {
  /** The bucket, e.g. `<keyId>:default` or `<keyId>:conversions`. */
  readonly bucket: string;
  /** The budget of one minute's window. */
  readonly limitPerMinute: number;
}

export interface RateLimiter {
  /**
   * Takes one request from the bucket's budget. The count is shared by
   * every API process using the same database.
   */
  consume(command: ConsumeCommand): Promise<RateLimitDecision>;
}
