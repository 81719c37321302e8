import { Resolver } from "node:dns/promises";
import type { HostResolver, ResolvedAddress } from "../../capabilities/webhooks/ssrf-policy.ts";

/**
 * The webhook target policy's resolver: asynchronous DNS (c-ares, through
 * `dns.promises.Resolver`) with a deadline of its own, never `dns.lookup`.
 * `dns.lookup` runs getaddrinfo on libuv's 4-thread pool without a timeout:
 * a slow or silent nameserver would hold those threads (shared with file
 * and crypto work) for every tenant of the process, and a lookup would
 * start before the delivery's 10 s timer. Here each
 * lookup has its own Resolver, `timeoutMs` per try and `tries` tries, and is
 * cancelled at `timeoutMs` overall whatever the library does.
 *
 * A and AAAA are asked in parallel; every address is returned (the policy
 * refuses a host when any of them is not public). A family that fails while
 * the other answers is left out: the delivery connects only to addresses
 * this answer holds. The hosts file is not read: webhook targets are public
 * names.
 */
export interface DnsHostResolverOptions {
  /** Overall deadline of one lookup, ms (config WEBHOOK_DNS_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** Tries per nameserver (default 2; each try waits timeoutMs / tries). */
  readonly tries?: number;
  /** `ip` or `ip:port` nameservers; default the system's (/etc/resolv.conf). */
  readonly servers?: readonly string[];
}

/** A lookup that passed its deadline (code ETIMEOUT, like c-ares' own). */
export class DnsTimeoutError extends Error {
  readonly code = "ETIMEOUT";
  constructor(hostname: string, ms: number) {
    super(`DNS lookup of ${hostname} timed out after ${ms} ms`);
    this.name = "DnsTimeoutError";
  }
}

export function dnsHostResolver(options: DnsHostResolverOptions): HostResolver {
  const tries = Math.max(1, options.tries ?? 2);
  const perTry = Math.max(1, Math.floor(options.timeoutMs / tries));
  return {
    async resolve(hostname) {
      const resolver = new Resolver({ timeout: perTry, tries });
      if (options.servers && options.servers.length > 0) resolver.setServers([...options.servers]);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          resolver.cancel();
          reject(new DnsTimeoutError(hostname, options.timeoutMs));
        }, options.timeoutMs);
      });
      try {
        const [v4, v6] = await Promise.race([
          Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]),
          deadline,
        ]);
        const addresses: ResolvedAddress[] = [
          ...(v4.status === "fulfilled" ? v4.value.map((address): ResolvedAddress => ({ address, family: 4 })) : []),
          ...(v6.status === "fulfilled" ? v6.value.map((address): ResolvedAddress => ({ address, family: 6 })) : []),
        ];
        if (addresses.length > 0) return addresses;
        const failure = v4.status === "rejected" ? (v4.reason as unknown) : v6.status === "rejected" ? (v6.reason as unknown) : undefined;
        if (isTimeout(failure)) throw new DnsTimeoutError(hostname, options.timeoutMs);
        throw failure instanceof Error ? failure : new Error(`${hostname} has no address`);
      } finally {
        clearTimeout(timer);
        resolver.cancel();
      }
    },
  };
}

/** c-ares reports a nameserver that never answered as ETIMEOUT (or ECANCELLED once cancelled). */
export function isTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "ETIMEOUT" || code === "ECANCELLED";
}
