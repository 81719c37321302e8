import { lookup } from "node:dns/promises";
import type { HostResolver, ResolvedAddress } from "../../capabilities/webhooks/ssrf-policy.ts";

/**
 * The webhook target policy's resolver on the system's getaddrinfo (hosts
 * file and configured DNS servers), the same answers a plain connection
 * would use. Every address is returned, in the system's order: the policy
 * refuses a host when any of them is not public.
 */
export function systemHostResolver(): HostResolver {
  return {
    async resolve(hostname) {
      const answers = await lookup(hostname, { all: true, order: "verbatim" });
      return answers
        .filter((a) => a.family === 4 || a.family === 6)
        .map((a): ResolvedAddress => ({ address: a.address, family: a.family as 4 | 6 }));
    },
  };
}
