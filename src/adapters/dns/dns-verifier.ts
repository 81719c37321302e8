import { Resolver } from "node:dns/promises";
import { dkimRecordName, dmarcRecordName, type DnsRecordCheck, type DnsSettings } from "../../capabilities/sending-setup/dns-records.ts";
import { DnsUnavailableError, type DnsVerifier } from "../../capabilities/sending-setup/ports.ts";

export interface DnsVerifierOptions extends DnsSettings {
  /** `ip` or `ip:port` entries (Resolver#setServers); empty: the system's resolvers. */
  readonly servers: readonly string[];
  /** Per-try timeout in milliseconds. Default 3000. */
  readonly timeoutMs?: number;
  /** Tries per server. Default 2. */
  readonly tries?: number;
}

/** "This name has no such record": the answer is a definite no. */
const ABSENT = new Set(["ENODATA", "ENOTFOUND"]);

async function lookup<T>(name: string, query: () => Promise<T[]>): Promise<T[]> {
  try {
    return await query();
  } catch (error: unknown) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && ABSENT.has(code)) return [];
    throw new DnsUnavailableError(name, typeof code === "string" ? code : "unknown error");
  }
}

/** One TXT record as published: its character-strings joined (RFC 7208 3.3, RFC 6376 3.6.2.2). */
function joined(records: readonly (readonly string[])[]): string[] {
  return records.map((chunks) => chunks.join(""));
}

/** `k=v; k=v` tag lists of DKIM and DMARC records; whitespace around tags and values ignored. */
function tags(record: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of record.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return out;
}

/** Some TXT record at the DKIM name carries exactly our public key (whitespace-insensitive). */
export function dkimMatches(records: readonly (readonly string[])[], publicKey: string): boolean {
  return joined(records).some((record) => {
    const t = tags(record);
    const version = t.get("v");
    const keyType = t.get("k");
    if (version !== undefined && version !== "DKIM1") return false;
    if (keyType !== undefined && keyType.toLowerCase() !== "rsa") return false;
    return t.get("p")?.replace(/\s+/g, "") === publicKey;
  });
}

/**
 * The one SPF record of the name includes ours. Two SPF records are a
 * permanent error for receivers (RFC 7208 4.5), so they fail here too.
 */
export function spfMatches(records: readonly (readonly string[])[], spfInclude: string): boolean {
  const spf = joined(records).filter((record) => /^v=spf1(\s|$)/i.test(record.trim()));
  if (spf.length !== 1) return false;
  const wanted = spfInclude.toLowerCase();
  return (spf[0] ?? "")
    .trim()
    .split(/\s+/)
    .some((term) => {
      const match = /^\+?include:(.+)$/i.exec(term);
      return match?.[1] !== undefined && match[1].toLowerCase().replace(/\.$/, "") === wanted;
    });
}

/** Some MX of the return-path domain is our bounce host. */
export function mxMatches(records: readonly { exchange: string }[], host: string): boolean {
  const wanted = host.toLowerCase();
  return records.some((mx) => mx.exchange.toLowerCase().replace(/\.$/, "") === wanted);
}

/**
 * Exactly one DMARC record: `v=DMARC1` first, matched precisely (RFC 7489
 * 6.4); receivers ignore the policy when there are several (6.6.3).
 */
export function dmarcMatches(records: readonly (readonly string[])[]): boolean {
  const dmarc = joined(records).filter((record) => /^v\s*=\s*DMARC1\s*(;|$)/.test(record.trim()));
  return dmarc.length === 1;
}

/**
 * Real lookups through a `node:dns` Resolver of our own, so DNS_SERVERS (or
 * a test's server) applies to verification only, not to the whole process.
 */
export function createDnsVerifier(options: DnsVerifierOptions): DnsVerifier {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 3000, tries: options.tries ?? 2 });
  // Throws on a malformed entry: a configuration error, seen at startup.
  if (options.servers.length > 0) resolver.setServers([...options.servers]);

  return {
    async check(facts) {
      const dkimName = dkimRecordName(facts.dkimSelector, facts.domain);
      const dmarcName = dmarcRecordName(facts.domain);
      const [dkim, spf, mx, dmarc] = await Promise.all([
        lookup(dkimName, () => resolver.resolveTxt(dkimName)),
        lookup(facts.returnPathDomain, () => resolver.resolveTxt(facts.returnPathDomain)),
        lookup(facts.returnPathDomain, () => resolver.resolveMx(facts.returnPathDomain)),
        lookup(dmarcName, () => resolver.resolveTxt(dmarcName)),
      ]);
      const records: DnsRecordCheck[] = [
        seen("dkim", joined(dkim), dkimMatches(dkim, facts.dkimPublicKey)),
        seen("spf", joined(spf), spfMatches(spf, options.spfInclude)),
        seen("return_path", mx.map((one) => `${one.priority} ${one.exchange.replace(/\.$/, "")}`), mxMatches(mx, options.returnPathMxHost)),
        seen("dmarc", joined(dmarc), dmarcMatches(dmarc)),
      ];
      const ok = (purpose: DnsRecordCheck["purpose"]) => records.some((one) => one.purpose === purpose && one.state === "verified");
      return { dkim: ok("dkim"), spf: ok("spf") && ok("return_path"), dmarc: ok("dmarc"), records };
    },
  };
}

/** A record as seen: nothing there is `missing`, something else than asked is `wrong`. */
function seen(purpose: DnsRecordCheck["purpose"], found: string[], matches: boolean): DnsRecordCheck {
  return { purpose, state: matches ? "verified" : found.length === 0 ? "missing" : "wrong", found };
}
