import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";
import { IDEMPOTENCY_KEY_HEADER_NAME, IDEMPOTENT_REPLAYED_HEADER, RETRY_AFTER_HEADER } from "../../contract/names.ts";
import { storableHeaders } from "./answer-headers.ts";
import type { IdempotencyStore } from "./ports.ts";
import type { ClaimResult, IdempotencyScope, StoredAnswer } from "./types.ts";

/**
 * Default lease of a claim, in seconds: the REST bridge's deadline for a
 * call (30 s) plus LEASE_MARGIN_SECONDS.
 */
export const DEFAULT_LEASE_SECONDS = 40;
/** Added to a request's own deadline: time for a handler to notice it and for the answer to be stored. */
export const LEASE_MARGIN_SECONDS = 10;

export interface IdempotencyGuardOptions {
  /**
   * How long an unanswered claim holds its key (config
   * idempotencyLeaseSeconds): the request deadline plus a margin. A request
   * that dies before it can answer or drop its claim (its process crashed,
   * the database went away under it) locks the key this long at most; a
   * request with an earlier deadline of its own holds it until that
   * deadline plus LEASE_MARGIN_SECONDS. Default DEFAULT_LEASE_SECONDS.
   */
  readonly leaseSeconds?: number;
  /** How often a request waiting for an identical one in progress looks again. Default 50 ms. */
  readonly pollMs?: number;
  /** How long it waits before answering IDEMPOTENCY_CONFLICT. Default 15 000 ms. */
  readonly waitMs?: number;
  /** Failures to store or drop an answer (the request's own answer still goes out). Default: console.error. */
  readonly onStoreError?: (error: unknown, scope: IdempotencyScope) => void;
}

/** The answer of a request that ran, with what to keep of it. */
export interface FreshAnswer<T> {
  /** Returned to the caller as is. */
  readonly value: T;
  /** Protobuf binary of the response message, kept for replays. */
  readonly response: Uint8Array;
  /** Answer headers to repeat on replays (see storableHeaders). */
  readonly headers: Readonly<Record<string, string>>;
}

export type Execution<T> =
  /** The request ran now; its answer is stored. */
  | { readonly replayed: false; readonly value: T }
  /** The stored first answer; `headers` include `idempotent-replayed: true`. */
  | { readonly replayed: true; readonly response: Uint8Array; readonly headers: Readonly<Record<string, string>> };

export interface ExecuteOptions {
  /** Aborts waiting for an identical request in progress (client gone, deadline). */
  readonly signal?: AbortSignal;
  /** Milliseconds left until the caller's own deadline, when it set one (gRPC `grpc-timeout`, Connect timeout). */
  readonly deadlineMs?: number;
}

/**
 * Errors that are the request's answer and are replayed as such: the 4xx of
 * the contract. A 429 and 5xx / unexpected errors are not answers about the
 * request (the spec's retry guidance says: retry those with the same key),
 * so their claim is dropped and a retry runs again.
 */
function isStoredError(error: ApiError): boolean {
  const status = error.httpStatus;
  return status >= 400 && status < 500 && error.code !== "RATE_LIMITED";
}

function stillInProgress(leaseSecondsLeft: number): ApiError {
  const seconds = Math.max(1, Math.ceil(leaseSecondsLeft));
  return new ApiError(
    "IDEMPOTENCY_CONFLICT",
    `A request with this ${IDEMPOTENCY_KEY_HEADER_NAME} is still in progress; retry with the same key in ${seconds} s.`,
    { [RETRY_AFTER_HEADER]: String(seconds) },
  );
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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

/**
 * The idempotency rules, independent of the transport: the first request
 * with a key runs, later identical ones get its answer, a different request
 * with the same key is refused, and identical requests arriving while the
 * first still runs wait for its answer.
 */
export class IdempotencyGuard {
  readonly #store: IdempotencyStore;
  readonly #leaseSeconds: number;
  readonly #pollMs: number;
  readonly #waitMs: number;
  readonly #onStoreError: (error: unknown, scope: IdempotencyScope) => void;

  constructor(store: IdempotencyStore, options: IdempotencyGuardOptions = {}) {
    const lease = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    if (!(lease > 0)) throw new Error(`idempotency lease must be > 0 seconds, got ${lease}`);
    this.#store = store;
    this.#leaseSeconds = lease;
    this.#pollMs = options.pollMs ?? 50;
    this.#waitMs = options.waitMs ?? 15_000;
    this.#onStoreError =
      options.onStoreError ?? ((error, scope) => console.error(`idempotency: storing the answer of ${scope.rpc} failed`, error));
  }

  /**
   * Runs `run` at most once per scope (API key + Idempotency-Key) within the
   * window, or answers from the record of the first run. Throws ApiError
   * IDEMPOTENCY_CONFLICT for a different request with the same key or when
   * an identical request is still running after the wait (with
   * `retry-after`: the seconds until its lease ends); rethrows a stored
   * error answer (4xx) with `idempotent-replayed: true` among its headers.
   */
  async execute<T>(scope: IdempotencyScope, run: () => Promise<FreshAnswer<T>>, options: ExecuteOptions = {}): Promise<Execution<T>> {
    const deadline = Date.now() + this.#waitMs;
    const lease = this.#leaseFor(options.deadlineMs);
    let found: ClaimResult = await this.#store.claim(scope, lease);
    for (;;) {
      switch (found.kind) {
        case "claimed":
          return this.#run(scope, found.token, run);
        case "mismatch":
          throw new ApiError("IDEMPOTENCY_CONFLICT", "Idempotency key already used with a different body.");
        case "completed":
          return replay(found.answer);
        case "in_progress": {
          if (Date.now() >= deadline) throw stillInProgress(found.leaseSecondsLeft);
          await sleep(this.#pollMs, options.signal);
          const now = await this.#store.inspect(scope);
          // Gone (the first run failed and dropped its claim) or past its lease: try to run it ourselves.
          found = now.kind === "absent" ? await this.#store.claim(scope, lease) : now;
        }
      }
    }
  }

  /** Stops the store's background work. */
  close(): Promise<void> {
    return this.#store.close();
  }

  async #run<T>(scope: IdempotencyScope, token: string, run: () => Promise<FreshAnswer<T>>): Promise<Execution<T>> {
    let fresh: FreshAnswer<T>;
    try {
      fresh = await run();
    } catch (error) {
      const apiError = apiErrorFrom(error);
      if (apiError && isStoredError(apiError)) {
        await this.#quietly(scope, () =>
          this.#store.complete(scope, token, {
            kind: "error",
            code: apiError.code,
            message: apiError.message,
            headers: storableHeaders(Object.entries(apiError.headers)),
          }),
        );
      } else {
        await this.#quietly(scope, () => this.#store.release(scope, token));
      }
      throw error;
    }
    // A false result means the claim was taken over as abandoned; the answer still goes out.
    await this.#quietly(scope, () => this.#store.complete(scope, token, { kind: "response", response: fresh.response, headers: fresh.headers }));
    return { replayed: false, value: fresh.value };
  }

  /** The lease of a claim: the configured one, or the caller's earlier deadline plus the margin. */
  #leaseFor(deadlineMs: number | undefined): number {
    if (deadlineMs === undefined || !Number.isFinite(deadlineMs)) return this.#leaseSeconds;
    return Math.min(this.#leaseSeconds, Math.ceil(Math.max(0, deadlineMs) / 1000) + LEASE_MARGIN_SECONDS);
  }

  /** Bookkeeping failures never replace the request's own answer or error. */
  async #quietly(scope: IdempotencyScope, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.#onStoreError(error, scope);
    }
  }
}

function replay(answer: StoredAnswer): Execution<never> {
  const headers = { ...answer.headers, [IDEMPOTENT_REPLAYED_HEADER]: "true" };
  if (answer.kind === "error") throw new ApiError(answer.code, answer.message, headers);
  return { replayed: true, response: answer.response, headers };
}
