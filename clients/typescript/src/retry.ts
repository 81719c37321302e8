import type { MailApiError } from "./errors.js";

/**
 * When a failed call is sent again. The spec's retry guidance: on 429 and
 * 5xx wait (`retry-after` when the service sent it, else increasing delays)
 * and retry with the same idempotency key; other errors are not retried.
 */
export interface RetryOptions {
  /** Times a call is sent at most, the first included. Default 4. */
  readonly maxAttempts: number;
  /** The first wait when the service sent no `retry-after`, in ms; it doubles on each retry. Default 500. */
  readonly initialDelayMs: number;
  /** Cap of one such wait, in ms (a `retry-after` is never shortened). Default 10 000. */
  readonly maxDelayMs: number;
  /**
   * Time one call may take with its retries, in ms: a retry whose wait would
   * end later is not made and the last error is thrown. Default 65 000, one
   * rate-limit window (a 429's `retry-after` is at most 60 s) and a margin.
   */
  readonly maxElapsedMs: number;
  /** Told before each wait (logging, metrics). */
  readonly onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** `mail.v1.MailService/SendMessage`. */
  readonly procedure: string;
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  /** The wait before the next attempt, in ms. */
  readonly delayMs: number;
  /** Why: the failed attempt's error. */
  readonly error: MailApiError;
  /** The idempotency key every attempt of the call carries, when it has one. */
  readonly idempotencyKey: string | undefined;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 4,
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  maxElapsedMs: 65_000,
};

/** No retries: every error is thrown as it comes. */
export const NO_RETRY: RetryOptions = { ...DEFAULT_RETRY, maxAttempts: 1 };

/**
 * The wait before the next attempt, or undefined when the error is thrown
 * instead: it is not retryable, the attempts are used up, or the wait would
 * end past the call's time budget.
 */
export function retryDelay(
  error: MailApiError,
  attempt: number,
  elapsedMs: number,
  options: RetryOptions,
  random: () => number = Math.random,
): number | undefined {
  if (!error.retryable || attempt >= options.maxAttempts) return undefined;
  const delay =
    error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : backoff(attempt, options, random);
  return elapsedMs + delay > options.maxElapsedMs ? undefined : delay;
}

/**
 * Exponential backoff with jitter: the n-th wait is drawn from the upper
 * half of min(maxDelay, initialDelay * 2^(n-1)), so waits grow while
 * clients that failed together do not come back together.
 */
function backoff(attempt: number, options: RetryOptions, random: () => number): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
