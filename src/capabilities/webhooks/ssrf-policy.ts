import ipaddr from "ipaddr.js";

/**
 * Where webhook deliveries may go (spec, Events: "The endpoint URL must use
 * `https://` and resolve to a public internet address; private, loopback and
 * internal hosts are refused on save ... and checked again before every
 * delivery").
 *
 * A URL is allowed only when it is `https://`, carries no user info, names
 * its host in a plain way (no exotic IPv4 spellings) and the host is, or
 * resolves only to, public unicast addresses. One disallowed address among
 * several answers refuses the whole host: a connection could land on any of
 * them. The delivery adapter connects to an address this check returned,
 * never resolving again, so a DNS answer that changes between the check and
 * the connection (rebinding) cannot slip through.
 */

/** One address a name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/**
 * Port: resolves a host name to every address a connection could use
 * (A and AAAA). Throws when the name does not resolve (an error whose
 * `code` is `ETIMEOUT` when it did not resolve in time); an empty answer is
 * treated the same way.
 */
export interface HostResolver {
  resolve(hostname: string): Promise<readonly ResolvedAddress[]>;
}

/** What is wrong with a URL, for the caller to word (save) or record (delivery). */
export type TargetProblem =
  /** Not a URL at all. */
  | "invalid_url"
  /** Another scheme than `https:`. */
  | "not_https"
  /** `user:password@` in the URL. */
  | "userinfo"
  /** The host is an internal name or an address outside public unicast space. */
  | "host_not_allowed"
  /** The name did not resolve (no address, or DNS failed). */
  | "unresolvable"
  /** The name did not resolve within the deadline (a slow or silent nameserver). */
  | "resolve_timeout";

/** A URL that passed: the addresses to connect to, all checked. */
export interface CheckedTarget {
  /** The URL as normalised by the WHATWG parser (what is stored and requested). */
  readonly url: URL;
  /** Host name without IPv6 brackets: the TLS server name and Host header source. */
  readonly hostname: string;
  readonly port: number;
  /** Every address of the host, each one allowed; connect only to these. */
  readonly addresses: readonly ResolvedAddress[];
}

export type TargetCheck =
  | { readonly allowed: true; readonly target: CheckedTarget }
  | { readonly allowed: false; readonly problem: TargetProblem; readonly reason: string };

export interface WebhookTargetPolicyOptions {
  readonly resolver: HostResolver;
  /**
   * Lets loopback addresses (127.0.0.0/8, ::1) through: a receiver on the
   * service's own machine (development, the test suite, the benchmarks).
   * No environment variable sets it, and the composition root refuses it in
   * production mode (src/wiring/webhooks.ts). Every other address rule
   * stands, and a loopback address inside another form (IPv4-mapped, NAT64,
   * 6to4) is refused all the same.
   */
  readonly allowLoopback?: boolean;
  /**
   * Longest wait for the resolver, whatever it is (config
   * WEBHOOK_DNS_TIMEOUT_MS): past it the check answers `resolve_timeout`.
   * The resolver adapter has a deadline of its own too; this one bounds
   * any resolver. Default 5,000 ms.
   */
  readonly resolveTimeoutMs?: number;
}

export const DEFAULT_RESOLVE_TIMEOUT_MS = 5_000;

/**
 * Names that never denote a public internet host: special-use and
 * internal-only suffixes (RFC 6761, RFC 6762, RFC 8375, RFC 9476, ICANN's
 * `.internal`), and names without a dot, which resolve through local search
 * domains.
 */
const INTERNAL_SUFFIXES = ["localhost", "local", "internal", "home.arpa", "localdomain", "lan", "intranet", "test", "invalid", "onion", "alt"];

/** Cloud instance metadata services, named for clearer refusals (their ranges are refused anyway). */
const METADATA_ADDRESSES = new Set(["169.254.169.254", "fd00:ec2::254", "100.100.100.200"]);

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

export class WebhookTargetPolicy {
  readonly #resolver: HostResolver;
  readonly #allowLoopback: boolean;
  readonly #resolveTimeoutMs: number;

  constructor(options: WebhookTargetPolicyOptions) {
    this.#resolver = options.resolver;
    this.#allowLoopback = options.allowLoopback === true;
    this.#resolveTimeoutMs = options.resolveTimeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS;
  }

  /** True when this policy lets loopback through (see allowLoopback). */
  get allowsLoopback(): boolean {
    return this.#allowLoopback;
  }

  /**
   * Checks a URL and resolves its host; every answer is checked. The lookup
   * takes at most the policy's resolve timeout, or `deadlineMs` when that is
   * shorter (what is left of a delivery attempt's budget).
   */
  async check(rawUrl: string, deadlineMs?: number): Promise<TargetCheck> {
    const parsed = parseTargetUrl(rawUrl);
    if (!parsed.ok) return refuse(parsed.problem, parsed.reason);
    const { url, hostname, port, literal } = parsed;

    let addresses: readonly ResolvedAddress[];
    if (literal) {
      addresses = [literal];
    } else {
      const nameProblem = internalNameProblem(hostname);
      if (nameProblem) return refuse("host_not_allowed", nameProblem);
      const timeoutMs = Math.max(0, Math.min(this.#resolveTimeoutMs, deadlineMs ?? Number.POSITIVE_INFINITY));
      try {
        const answer = await withDeadline(this.#resolver.resolve(hostname), timeoutMs);
        if (answer === TIMED_OUT) return refuse("resolve_timeout", `${hostname} did not resolve within ${timeoutMs} ms`);
        addresses = answer;
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        // A resolver's own deadline (ETIMEOUT) is a timeout too.
        if ((error as { code?: unknown }).code === "ETIMEOUT") return refuse("resolve_timeout", `${hostname} did not resolve in time (${detail})`);
        return refuse("unresolvable", `${hostname} does not resolve (${detail})`);
      }
      if (addresses.length === 0) return refuse("unresolvable", `${hostname} has no address`);
    }

    for (const candidate of addresses) {
      const problem = addressProblem(candidate.address, this.#allowLoopback);
      if (problem) {
        const shown = literal ? candidate.address : `${hostname} resolves to ${candidate.address}`;
        return refuse("host_not_allowed", `${shown}: ${problem}`);
      }
    }
    return { allowed: true, target: { url, hostname, port, addresses } };
  }
}

const TIMED_OUT: unique symbol = Symbol("timed out");

/** The promise's value, or TIMED_OUT once `ms` have passed (the promise is left to settle on its own). */
async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  // A late rejection of the abandoned lookup must not become an unhandled one.
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function refuse(problem: TargetProblem, reason: string): TargetCheck {
  return { allowed: false, problem, reason };
}

type ParsedUrl =
  | { ok: true; url: URL; hostname: string; port: number; literal: ResolvedAddress | undefined }
  | { ok: false; problem: TargetProblem; reason: string };

/**
 * Parses with the WHATWG parser (what `fetch` and `https.request` use) and
 * looks at the raw authority too, for what the parser silently rewrites:
 * an empty `@` and numeric IPv4 spellings (`2130706433`, `0x7f.1`,
 * `0177.0.0.1`, `127.1`, percent-encoded digits), which are refused rather
 * than trusted to mean what a reader of the URL thinks.
 */
function parseTargetUrl(rawUrl: string): ParsedUrl {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, problem: "invalid_url", reason: "is not a valid URL" };
  }
  if (url.protocol !== "https:") return { ok: false, problem: "not_https", reason: "must use https://" };

  const authority = rawAuthority(rawUrl);
  if (url.username !== "" || url.password !== "" || authority.includes("@")) {
    return { ok: false, problem: "userinfo", reason: "must not contain a user name or password" };
  }

  const port = url.port === "" ? 443 : Number(url.port);
  if (url.hostname.startsWith("[")) {
    const address = url.hostname.slice(1, -1);
    return { ok: true, url, hostname: address, port, literal: { address, family: 6 } };
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(url.hostname)) {
    if (rawHost(authority).toLowerCase() !== url.hostname) {
      return { ok: false, problem: "host_not_allowed", reason: `write the IPv4 address as four decimal numbers (${url.hostname})` };
    }
    return { ok: true, url, hostname: url.hostname, port, literal: { address: url.hostname, family: 4 } };
  }
  return { ok: true, url, hostname: url.hostname, port, literal: undefined };
}

/** The authority of a URL as written: after `//`, up to the path, query or fragment. */
function rawAuthority(rawUrl: string): string {
  const trimmed = rawUrl.trim();
  const start = trimmed.indexOf("//");
  if (start === -1) return "";
  const rest = trimmed.slice(start + 2);
  const end = rest.search(/[/\\?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** The host of a raw authority (user info already refused), without the port. */
function rawHost(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(0, authority.indexOf("]") + 1);
  const colon = authority.lastIndexOf(":");
  return colon === -1 ? authority : authority.slice(0, colon);
}

function internalNameProblem(hostname: string): string | undefined {
  const name = hostname.replace(/\.$/, "").toLowerCase();
  if (!name.includes(".")) return `${hostname} is not a public internet host name`;
  for (const suffix of INTERNAL_SUFFIXES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) return `${hostname} is an internal host name`;
  }
  return undefined;
}

/**
 * Why an address may not receive webhooks, or undefined when it may.
 * Allowed: public IPv4 unicast, IPv6 global unicast (2000::/3), and the
 * IPv6 forms that carry an IPv4 destination (NAT64 64:ff9b::/96, 6to4,
 * Teredo) when the IPv4 addresses inside are public themselves.
 * IPv4-mapped and IPv4-compatible IPv6 addresses are refused outright:
 * no public resolver answers them, and they are a classic filter bypass.
 */
export function addressProblem(address: string, allowLoopback = false): string | undefined {
  if (METADATA_ADDRESSES.has(address.toLowerCase())) return "cloud metadata address";
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) return ipv4Problem(ipaddr.IPv4.parse(address), allowLoopback);
  if (!ipaddr.IPv6.isValid(address) || address.includes("%")) return "not an IP address";
  const v6 = ipaddr.IPv6.parse(address);
  const range = v6.range();
  if (range === "loopback") return allowLoopback ? undefined : "loopback address";
  if (range === "ipv4Mapped" || range === "rfc6145") return "IPv4-mapped IPv6 address";
  if (range === "rfc6052") {
    if (!v6.match(NAT64_WELL_KNOWN)) return "local-use NAT64 address";
    const inner = embeddedIPv4(v6.parts[6], v6.parts[7]);
    const problem = ipv4Problem(inner, false);
    return problem ? `NAT64 address of ${inner.toString()} (${problem})` : undefined;
  }
  if (range === "6to4") {
    const inner = embeddedIPv4(v6.parts[1], v6.parts[2]);
    const problem = ipv4Problem(inner, false);
    return problem ? `6to4 address of ${inner.toString()} (${problem})` : undefined;
  }
  if (range === "teredo") {
    // Teredo: the server's IPv4 in bits 32-63, the client's (inverted) in bits 96-127.
    const server = embeddedIPv4(v6.parts[2], v6.parts[3]);
    const client = embeddedIPv4(invert16(v6.parts[6]), invert16(v6.parts[7]));
    const problem = ipv4Problem(server, false) ?? ipv4Problem(client, false);
    return problem ? `Teredo address embedding a non-public IPv4 address (${problem})` : undefined;
  }
  if (range !== "unicast") return `${describe(range)} address`;
  if (!v6.match(GLOBAL_UNICAST_V6)) {
    return v6.parts.slice(0, 6).every((part) => part === 0) ? "IPv4-compatible IPv6 address" : "not a global unicast address";
  }
  return undefined;
}

function ipv4Problem(v4: ipaddr.IPv4, allowLoopback: boolean): string | undefined {
  const range = v4.range();
  if (range === "unicast") return undefined;
  if (range === "loopback" && allowLoopback) return undefined;
  return `${describe(range)} address`;
}

function embeddedIPv4(high: number | undefined, low: number | undefined): ipaddr.IPv4 {
  const h = high ?? 0;
  const l = low ?? 0;
  return new ipaddr.IPv4([h >> 8, h & 0xff, l >> 8, l & 0xff]);
}

function invert16(part: number | undefined): number {
  return ~(part ?? 0) & 0xffff;
}

const RANGE_WORDS: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "carrier-grade NAT (shared)",
  private: "private",
  reserved: "reserved or documentation",
  benchmarking: "benchmarking",
  amt: "AMT anycast",
  as112: "AS112 anycast",
  as112v6: "AS112 anycast",
  uniqueLocal: "unique-local",
  deprecatedSiteLocal: "site-local",
  discard: "discard-only",
  orchid2: "ORCHID",
  deprecatedOrchid: "ORCHID",
  droneRemoteIdProtocolEntityTags: "drone remote ID",
  segmentRouting: "segment routing",
};

function describe(range: string): string {
  return RANGE_WORDS[range] ?? range;
}
