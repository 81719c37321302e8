import { isIPv4, isIPv6 } from "node:net";
import { ApiError } from "../../contract/api-error.ts";
import { RETRY_AFTER_HEADER } from "../../contract/names.ts";

/**
 * Failed authentications per client address, in this process's memory.
 *
 * Every presented key costs an HMAC and a database lookup before it can be
 * refused, and the per-key rate limit cannot apply to keys that do not
 * exist: without this, a flood of well-formed random keys is never limited.
 * An address that failed `maxFailures` times within a window is refused
 * (429) until the window ends, before any lookup.
 *
 * Per process, so N processes allow N times the budget: enough to make a
 * flood cheap to refuse, which is the point. The map is bounded: when full,
 * the address seen longest ago is forgotten. IPv6 clients are counted per
 * /64, the block one subscriber usually holds.
 */
export interface FailedAuthenticationsOptions {
  /** Failures allowed per address and window (default 30). */
  readonly maxFailures?: number;
  /** Window length in milliseconds (default one minute). */
  readonly windowMs?: number;
  /** Addresses remembered at most (default 10,000). */
  readonly maxAddresses?: number;
  readonly now?: () => number;
}

interface Window {
  readonly startedAt: number;
  failures: number;
}

export class FailedAuthentications {
  readonly maxFailures: number;
  readonly #windowMs: number;
  readonly #maxAddresses: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, Window>();

  constructor(options: FailedAuthenticationsOptions = {}) {
    this.maxFailures = options.maxFailures ?? 30;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxAddresses = options.maxAddresses ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Seconds until `address` may try again; 0 when it may try now. */
  retryAfterSeconds(address: string): number {
    const window = this.#current(addressKey(address));
    if (!window || window.failures < this.maxFailures) return 0;
    return Math.max(1, Math.ceil((window.startedAt + this.#windowMs - this.#now()) / 1000));
  }

  /** The answer to `address` while it is over its budget (429 RATE_LIMITED with Retry-After); undefined while it may try. */
  refusal(address: string): ApiError | undefined {
    const wait = this.retryAfterSeconds(address);
    if (wait === 0) return undefined;
    return new ApiError("RATE_LIMITED", `Too many failed authentications from this address. Retry after ${wait} s.`, {
      [RETRY_AFTER_HEADER]: String(wait),
    });
  }

  /** Counts one refused key or token presented from `address`. */
  recordFailure(address: string): void {
    const key = addressKey(address);
    const window = this.#current(key);
    if (window) {
      window.failures += 1;
      return;
    }
    this.#windows.delete(key);
    while (this.#windows.size >= this.#maxAddresses) {
      const oldest = this.#windows.keys().next();
      if (oldest.done) break;
      this.#windows.delete(oldest.value);
    }
    this.#windows.set(key, { startedAt: this.#now(), failures: 1 });
  }

  /** Addresses remembered now (bounded by maxAddresses). */
  get size(): number {
    return this.#windows.size;
  }

  #current(key: string): Window | undefined {
    const window = this.#windows.get(key);
    if (!window) return undefined;
    if (this.#now() - window.startedAt >= this.#windowMs) {
      this.#windows.delete(key);
      return undefined;
    }
    return window;
  }
}

/** IPv4 as is (also when IPv4-mapped), IPv6 by its /64, anything else as is. */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(":")}::/64`;
}

/** The eight hextets of an IPv6 address (zone and embedded IPv4 tail ignored past /64). */
function expandIPv6(address: string): string[] {
  const bare = address.split("%")[0] ?? address;
  const [head = "", tail] = bare.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array.from({ length: missing }, () => "0"), ...right].map((h) => h.toLowerCase().replace(/^0+(?=.)/, ""));
}
