import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";
import { IDEMPOTENT_REPLAYED_HEADER, storableHeaders } from "./answer-headers.ts";
import type { ClaimResult, IdempotencyScope, IdempotencyStore, StoredAnswer } from "./types.ts";

export interface IdempotencyGuardOptions {
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
  readonly #pollMs: number;
  readonly #waitMs: number;
  readonly #onStoreError: (error: unknown, scope: IdempotencyScope) => void;

  constructor(store: IdempotencyStore, options: IdempotencyGuardOptions = {}) {
    this.#store = store;
    this.#pollMs = options.pollMs ?? 50;
    this.#waitMs = options.waitMs ?? 15_000;
    this.#onStoreError =
      options.onStoreError ?? ((error, scope) => console.error(`idempotency: storing the answer of ${scope.rpc} failed`, error));
  }

  /**
   * Runs `run` at most once per scope (API key + Idempotency-Key) within the
   * window, or answers from the record of the first run. Throws ApiError
   * IDEMPOTENCY_CONFLICT for a different request with the same key or when
   * an identical request is still running after the wait; rethrows a stored
   * error answer (4xx) with `idempotent-replayed: true` among its headers.
   */
  async execute<T>(scope: IdempotencyScope, run: () => Promise<FreshAnswer<T>>, options: ExecuteOptions = {}): Promise<Execution<T>> {
    const deadline = Date.now() + this.#waitMs;
    let found: ClaimResult = await this.#store.claim(scope);
    for (;;) {
      switch (found.kind) {
        case "claimed":
          return this.#run(scope, found.token, run);
        case "mismatch":
          throw new ApiError("IDEMPOTENCY_CONFLICT", "Idempotency key already used with a different body.");
        case "completed":
          return replay(found.answer);
        case "in_progress": {
          if (Date.now() >= deadline) {
            throw new ApiError(
              "IDEMPOTENCY_CONFLICT",
              "A request with this Idempotency-Key is still in progress; retry later with the same key.",
            );
          }
          await sleep(this.#pollMs, options.signal);
          const now = await this.#store.inspect(scope);
          // Gone (the first run failed and dropped its claim) or abandoned: try to run it ourselves.
          found = now.kind === "absent" ? await this.#store.claim(scope) : now;
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
