import { ApiError } from "../contract/api-error.ts";
import { RETRY_AFTER_HEADER } from "../contract/names.ts";
import { isDatabaseUnavailable } from "../adapters/postgres/unavailable.ts";

/** How long a client should wait after a 503 before retrying, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

export function serviceUnavailable(): ApiError {
  return new ApiError(
    "SERVICE_UNAVAILABLE",
    `The service is busy or restarting; retry in ${UNAVAILABLE_RETRY_AFTER_SECONDS} seconds with the same idempotency key.`,
    { [RETRY_AFTER_HEADER]: String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
  );
}

/**
 * `target` with every method's "database cannot serve now" failure turned
 * into 503 SERVICE_UNAVAILABLE (with retry-after). Used for what runs before
 * any handler, outside the errors interceptor (authentication and rate
 * limits on the REST bridge), so a saturated pool never answers 500 there
 * either. Methods keep their own `this` (private fields work).
 */
export function unavailableAs503<T extends object>(target: T): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(object, args);
          return result instanceof Promise ? result.catch(rethrow) : result;
        } catch (error) {
          return rethrow(error);
        }
      };
    },
  });
}

/** The contract error an unexpected error stands for, if any (for the errors interceptor). */
export function classifyUnexpected(error: unknown): ApiError | undefined {
  return isDatabaseUnavailable(error) ? serviceUnavailable() : undefined;
}

function rethrow(error: unknown): never {
  throw isDatabaseUnavailable(error) ? serviceUnavailable() : error;
}
