import { describe, expect, it } from "vitest";
import {
  addressProblem,
  type HostResolver,
  type ResolvedAddress,
  WebhookTargetPolicy,
} from "../../../src/capabilities/webhooks/ssrf-policy.ts";

/** A resolver answering from a table; unknown names fail like NXDOMAIN. */
function tableResolver(table: Record<string, readonly string[]>): HostResolver & { readonly asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async resolve(hostname) {
      asked.push(hostname);
      const answer = table[hostname];
      if (!answer) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      return answer.map((address): ResolvedAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
    },
  };
}

const PUBLIC_V4 = "93.184.215.14";
const PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c";

const resolver = tableResolver({
  "hooks.example.com": [PUBLIC_V4, PUBLIC_V6],
  "v6only.example.com": [PUBLIC_V6],
  "private.example.com": ["10.1.2.3"],
  "mixed.example.com": [PUBLIC_V4, "192.168.1.10"],
  "metadata.example.com": ["169.254.169.254"],
  "loopback.example.com": ["127.0.0.1"],
  "mapped.example.com": ["::ffff:10.0.0.1"],
  "nat64.example.com": ["64:ff9b::a00:1"],
  "empty.example.com": [],
});
const policy = new WebhookTargetPolicy({ resolver });

describe("webhook URL policy: URLs", () => {
  it("allows https URLs whose host resolves only to public addresses, and connects to exactly those", async () => {
    const check = await policy.check("https://hooks.example.com/receive?x=1");
    expect(check.allowed).toBe(true);
    if (!check.allowed) return;
    expect(check.target.url.href).toBe("https://hooks.example.com/receive?x=1");
    expect(check.target.hostname).toBe("hooks.example.com");
    expect(check.target.port).toBe(443);
    expect(check.target.addresses.map((a) => a.address)).toEqual([PUBLIC_V4, PUBLIC_V6]);
  });

  it("keeps an explicit port and allows public IPv4 and IPv6 literals", async () => {
    const v4 = await policy.check(`https://${PUBLIC_V4}:8443/hook`);
    expect(v4.allowed && v4.target.port).toBe(8443);
    const v6 = await policy.check(`https://[${PUBLIC_V6}]/hook`);
    expect(v6.allowed && v6.target.addresses).toEqual([{ address: PUBLIC_V6, family: 6 }]);
    expect((await policy.check("https://v6only.example.com/")).allowed).toBe(true);
  });

  const refused: Array<[string, string, string]> = [
    // [url, problem, why]
    ["http://hooks.example.com/", "not_https", "plain http"],
    ["ftp://hooks.example.com/", "not_https", "other scheme"],
    ["not a url", "invalid_url", "garbage"],
    ["https://user:secret@hooks.example.com/", "userinfo", "user and password"],
    ["https://user@hooks.example.com/", "userinfo", "user only"],
    ["https://@hooks.example.com/", "userinfo", "empty user info the parser drops"],
    ["https://127.0.0.1/", "host_not_allowed", "loopback literal"],
    ["https://[::1]/", "host_not_allowed", "IPv6 loopback"],
    ["https://10.0.0.1/", "host_not_allowed", "private 10/8"],
    ["https://172.16.5.4/", "host_not_allowed", "private 172.16/12"],
    ["https://192.168.0.1/", "host_not_allowed", "private 192.168/16"],
    ["https://169.254.169.254/latest/meta-data/", "host_not_allowed", "cloud metadata"],
    ["https://[fd00:ec2::254]/", "host_not_allowed", "AWS IPv6 metadata"],
    ["https://100.64.0.1/", "host_not_allowed", "CGNAT"],
    ["https://0.0.0.0/", "host_not_allowed", "unspecified"],
    ["https://0/", "host_not_allowed", "unspecified, short spelling"],
    ["https://255.255.255.255/", "host_not_allowed", "broadcast"],
    ["https://224.0.0.1/", "host_not_allowed", "multicast"],
    ["https://240.0.0.1/", "host_not_allowed", "reserved"],
    ["https://192.0.2.10/", "host_not_allowed", "documentation TEST-NET-1"],
    ["https://198.51.100.10/", "host_not_allowed", "documentation TEST-NET-2"],
    ["https://203.0.113.10/", "host_not_allowed", "documentation TEST-NET-3"],
    ["https://198.18.0.1/", "host_not_allowed", "benchmarking"],
    ["https://192.0.0.8/", "host_not_allowed", "IETF protocol assignments"],
    ["https://[fe80::1]/", "host_not_allowed", "IPv6 link-local"],
    ["https://[fc00::1]/", "host_not_allowed", "unique-local"],
    ["https://[fec0::1]/", "host_not_allowed", "site-local"],
    ["https://[ff02::1]/", "host_not_allowed", "IPv6 multicast"],
    ["https://[::]/", "host_not_allowed", "IPv6 unspecified"],
    ["https://[2001:db8::1]/", "host_not_allowed", "IPv6 documentation"],
    ["https://[3fff::1]/", "host_not_allowed", "IPv6 documentation (new)"],
    ["https://[100::1]/", "host_not_allowed", "discard-only"],
    ["https://[::ffff:127.0.0.1]/", "host_not_allowed", "IPv4-mapped loopback"],
    ["https://[::ffff:8.8.8.8]/", "host_not_allowed", "IPv4-mapped, even public"],
    ["https://[::127.0.0.1]/", "host_not_allowed", "IPv4-compatible loopback"],
    ["https://[::8.8.8.8]/", "host_not_allowed", "IPv4-compatible public"],
    ["https://[64:ff9b::10.0.0.1]/", "host_not_allowed", "NAT64 of a private address"],
    ["https://[64:ff9b::169.254.169.254]/", "host_not_allowed", "NAT64 of the metadata address"],
    ["https://[64:ff9b:1::8.8.8.8]/", "host_not_allowed", "local-use NAT64"],
    ["https://[2002:a00:1::1]/", "host_not_allowed", "6to4 of 10.0.0.1"],
    ["https://[2002:7f00:1::1]/", "host_not_allowed", "6to4 of 127.0.0.1"],
    // Teredo: server 65.54.227.120, client 10.0.0.1 (inverted: f5ff:fffe).
    ["https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", "host_not_allowed", "Teredo of a private client"],
    ["https://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/", "host_not_allowed", "Teredo with a private server"],
    // Numeric spellings the WHATWG parser turns into 127.0.0.1.
    ["https://2130706433/", "host_not_allowed", "decimal integer"],
    ["https://0x7f000001/", "host_not_allowed", "hex integer"],
    ["https://0x7f.1/", "host_not_allowed", "hex, short form"],
    ["https://017700000001/", "host_not_allowed", "octal integer"],
    ["https://0177.0.0.1/", "host_not_allowed", "octal octet"],
    ["https://127.1/", "host_not_allowed", "two-part form"],
    ["https://%31%32%37.0.0.1/", "host_not_allowed", "percent-encoded digits"],
    ["https://127。0。0。1/", "host_not_allowed", "ideographic full stops"],
    // ... and of a public address: still refused, the spelling itself is the problem.
    ["https://134744072/", "host_not_allowed", "decimal spelling of 8.8.8.8"],
    ["https://0x08.0x08.0x08.0x08/", "host_not_allowed", "hex octets of 8.8.8.8"],
    // Internal names, refused without asking DNS.
    ["https://localhost/", "host_not_allowed", "localhost"],
    ["https://api.localhost/", "host_not_allowed", "*.localhost"],
    ["https://printer.local/", "host_not_allowed", "mDNS"],
    ["https://db.internal/", "host_not_allowed", ".internal"],
    ["https://router.home.arpa/", "host_not_allowed", "home.arpa"],
    ["https://intranet/", "host_not_allowed", "single label"],
    ["https://metadata/computeMetadata/v1/", "host_not_allowed", "single-label metadata name"],
    // Names that resolve badly.
    ["https://private.example.com/", "host_not_allowed", "resolves to a private address"],
    ["https://mixed.example.com/", "host_not_allowed", "one private address among public ones"],
    ["https://metadata.example.com/", "host_not_allowed", "resolves to the metadata address"],
    ["https://loopback.example.com/", "host_not_allowed", "resolves to loopback"],
    ["https://mapped.example.com/", "host_not_allowed", "resolves to an IPv4-mapped address"],
    ["https://nat64.example.com/", "host_not_allowed", "resolves to NAT64 of a private address"],
    ["https://nowhere.example.com/", "unresolvable", "does not resolve"],
    ["https://empty.example.com/", "unresolvable", "resolves to nothing"],
  ];

  it.each(refused)("refuses %s (%s: %s)", async (url, problem) => {
    const check = await policy.check(url);
    expect(check.allowed).toBe(false);
    if (check.allowed) return;
    expect(check.problem).toBe(problem);
    expect(check.reason.length).toBeGreaterThan(0);
  });

  it("never asks DNS about IP literals or internal names", async () => {
    const asking = tableResolver({});
    const quiet = new WebhookTargetPolicy({ resolver: asking });
    await quiet.check("https://10.0.0.1/");
    await quiet.check("https://localhost/");
    await quiet.check("https://[::1]/");
    await quiet.check(`https://${PUBLIC_V4}/`);
    expect(asking.asked).toEqual([]);
  });

  it("allows loopback only with the explicit test option, and nothing else private with it", async () => {
    const testing = new WebhookTargetPolicy({ resolver, allowLoopback: true });
    expect(testing.allowsLoopback).toBe(true);
    expect(policy.allowsLoopback).toBe(false);
    expect((await testing.check("https://127.0.0.1:8443/hook")).allowed).toBe(true);
    expect((await testing.check("https://[::1]:8443/hook")).allowed).toBe(true);
    expect((await testing.check("https://loopback.example.com/")).allowed).toBe(true);
    expect((await testing.check("https://10.0.0.1/")).allowed).toBe(false);
    expect((await testing.check("https://169.254.169.254/")).allowed).toBe(false);
    // The option is about addresses; the NAT64, mapped and numeric-spelling rules still hold.
    expect((await testing.check("https://[::ffff:127.0.0.1]/")).allowed).toBe(false);
    expect((await testing.check("https://[64:ff9b::127.0.0.1]/")).allowed).toBe(false);
    expect((await testing.check("https://2130706433/")).allowed).toBe(false);
  });
});

describe("webhook URL policy: DNS rebinding", () => {
  it("checks every resolution: a host that answered public, then private, is refused the second time", async () => {
    const answers = [[PUBLIC_V4], ["10.0.0.7"], [PUBLIC_V4, "127.0.0.1"]];
    let calls = 0;
    const rebinding: HostResolver = {
      async resolve() {
        const answer = answers[Math.min(calls++, answers.length - 1)] ?? [];
        return answer.map((address): ResolvedAddress => ({ address, family: 4 }));
      },
    };
    const checking = new WebhookTargetPolicy({ resolver: rebinding });
    const first = await checking.check("https://rebind.example.com/hook");
    expect(first.allowed && first.target.addresses).toEqual([{ address: PUBLIC_V4, family: 4 }]);
    const second = await checking.check("https://rebind.example.com/hook");
    expect(second.allowed).toBe(false);
    expect(!second.allowed && second.reason).toContain("10.0.0.7");
    const third = await checking.check("https://rebind.example.com/hook");
    expect(third.allowed).toBe(false);
    expect(calls).toBe(3);
  });
});

describe("addressProblem", () => {
  it.each([
    "8.8.8.8",
    "1.1.1.1",
    PUBLIC_V4,
    PUBLIC_V6,
    "2a00:1450:4001:80b::200e",
    "64:ff9b::808:808", // NAT64 of 8.8.8.8 (DNS64 networks)
    "2002:808:808::1", // 6to4 of 8.8.8.8
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo: server 65.54.227.120, client 8.8.8.8
  ])("allows public %s", (address) => {
    expect(addressProblem(address)).toBeUndefined();
  });

  it.each([
    ["127.0.0.53", "loopback"],
    ["10.255.255.255", "private"],
    ["172.31.255.255", "private"],
    ["169.254.0.1", "link-local"],
    ["169.254.169.254", "metadata"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["fd00:ec2::254", "metadata"],
    ["fd12:3456::1", "unique-local"],
    ["::ffff:a00:1", "IPv4-mapped"],
    ["::ffff:0:a00:1", "IPv4-mapped"], // RFC 6145 translated form
    ["garbage", "not an IP address"],
    ["0x7f.1", "not an IP address"],
    ["fe80::1%eth0", "not an IP address"],
  ])("refuses %s (%s)", (address, words) => {
    expect(addressProblem(address)).toContain(words);
  });
});
