/** The count of one bucket's current window, this request included. */
export interface WindowCount {
  /** Requests counted in the window so far, this one included. */
  readonly count: number;
  /** Milliseconds until the window ends. */
  readonly resetMs: number;
}

/**
 * Fixed one-minute windows of request counts, shared by every API process
 * on the same store (the PostgreSQL one is in src/adapters/postgres/rate-limit/).
 */
export interface RateLimitWindows {
  /**
   * Adds one request to the current window of `bucket`, atomically (of
   * concurrent additions none is lost), and answers the new count. The
   * window is the store's own clock's minute, so processes agree on it.
   */
  add(bucket: string): Promise<WindowCount>;
  /** Waits for background work in progress (call before closing the store). */
  close(): Promise<void>;
}
