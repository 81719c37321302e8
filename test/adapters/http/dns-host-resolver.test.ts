import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dnsHostResolver } from "../../../src/adapters/http/dns-host-resolver.ts";
import { startTestDnsServer, type TestDnsServer } from "../../support/dns-server.ts";
import { type SilentNameserver, startSilentNameserver } from "./silent-nameserver.ts";

/**
 * The webhook host resolver: asynchronous DNS with a deadline of its own
 * (issue 18, item 5), against real nameservers on 127.0.0.1.
 */
describe("DNS host resolver", () => {
  let silent: SilentNameserver;
  let dns: TestDnsServer;
  beforeAll(async () => {
    silent = await startSilentNameserver();
    dns = await startTestDnsServer();
  });
  afterAll(async () => {
    await silent?.close();
    await dns?.close();
  });

  it("gives up on a nameserver that never answers at its deadline, with ETIMEOUT", async () => {
    const resolver = dnsHostResolver({ timeoutMs: 600, servers: [silent.address] });
    const started = performance.now();
    const failure = await resolver.resolve("hooks.silent.example").then(
      () => undefined,
      (error: unknown) => error,
    );
    const tookMs = performance.now() - started;
    expect(failure).toMatchObject({ code: "ETIMEOUT" });
    // Bounded: the deadline, not the library's defaults (5 s x 4 tries per family).
    expect(tookMs).toBeLessThan(5_000);
    expect(silent.queries()).toBeGreaterThan(0);
  });

  it("answers the A records of a nameserver that answers", async () => {
    const answering = await startSilentNameserver();
    try {
      answering.answer("hooks.answering.example", "93.184.215.14");
      const resolver = dnsHostResolver({ timeoutMs: 2_000, servers: [answering.address] });
      expect(await resolver.resolve("hooks.answering.example")).toEqual([{ address: "93.184.215.14", family: 4 }]);
    } finally {
      await answering.close();
    }
  });

  it("fails, without a timeout, for a name the nameserver says does not exist", async () => {
    const resolver = dnsHostResolver({ timeoutMs: 2_000, servers: [dns.address] });
    const failure = await resolver.resolve("nothing-here.test-zone.example").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as { code?: string }).code).not.toBe("ETIMEOUT");
  });
});
