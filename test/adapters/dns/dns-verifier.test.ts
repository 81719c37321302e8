import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDnsVerifier } from "../../../src/adapters/dns/dns-verifier.ts";
import { type DnsCheckReport, DnsUnavailableError, type DnsVerifier, type DomainDnsFacts } from "../../../src/capabilities/sending-setup/index.ts";
import { startTestDnsServer, type TestDnsServer } from "../../support/dns-server.ts";

const FACTS: DomainDnsFacts = {
  domain: "shop.example",
  returnPathDomain: "bounces.shop.example",
  dkimSelector: "tm00c0ffee",
  dkimPublicKey: "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAabc+/def==",
};

/** The three verdicts the domain's state is decided on. */
function verdicts(report: DnsCheckReport): { dkim: boolean; spf: boolean; dmarc: boolean } {
  return { dkim: report.dkim, spf: report.spf, dmarc: report.dmarc };
}

describe("DNS verifier (real lookups against a local authoritative server)", () => {
  let dns: TestDnsServer;
  let verifier: DnsVerifier;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    verifier = createDnsVerifier({ spfInclude: "spf.mail.test", returnPathMxHost: "feedback.mail.test", servers: [dns.address], timeoutMs: 500, tries: 1 });
  });

  afterAll(async () => {
    await dns?.close();
  });

  beforeEach(() => dns.clear());

  function publishAll(): void {
    dns.addTxt(`${FACTS.dkimSelector}._domainkey.shop.example`, `v=DKIM1; k=rsa; p=${FACTS.dkimPublicKey}`);
    dns.addTxt("bounces.shop.example", "v=spf1 include:spf.mail.test -all");
    dns.addMx("bounces.shop.example", "feedback.mail.test", 10);
    dns.addTxt("_dmarc.shop.example", "v=DMARC1; p=none");
  }

  it("reports each check: all published, then nothing published", async () => {
    publishAll();
    const all = await verifier.check(FACTS);
    expect(verdicts(all)).toEqual({ dkim: true, spf: true, dmarc: true });
    expect(all.records.map((r) => [r.purpose, r.state])).toEqual([
      ["dkim", "verified"],
      ["spf", "verified"],
      ["return_path", "verified"],
      ["dmarc", "verified"],
    ]);
    expect(all.records.find((r) => r.purpose === "return_path")?.found).toEqual(["10 feedback.mail.test"]);
    dns.clear();
    const none = await verifier.check(FACTS);
    expect(verdicts(none)).toEqual({ dkim: false, spf: false, dmarc: false });
    expect(none.records.every((r) => r.state === "missing" && r.found.length === 0)).toBe(true);
  });

  it("SPF needs both the include and the MX of the return-path domain", async () => {
    publishAll();
    dns.clear("bounces.shop.example");
    dns.addTxt("bounces.shop.example", "v=spf1 include:spf.mail.test -all");
    const report = await verifier.check(FACTS);
    expect(verdicts(report)).toEqual({ dkim: true, spf: false, dmarc: true });
    expect(report.records.find((r) => r.purpose === "return_path")?.state).toBe("missing");
  });

  it("a record that says something else is wrong, with what the resolver returned", async () => {
    publishAll();
    dns.clear("_dmarc.shop.example");
    dns.addTxt("_dmarc.shop.example", "v=DMARC1; p=none");
    dns.addTxt("_dmarc.shop.example", "v=DMARC1; p=reject");
    const report = await verifier.check(FACTS);
    const dmarc = report.records.find((r) => r.purpose === "dmarc");
    expect(dmarc?.state).toBe("wrong");
    expect([...(dmarc?.found ?? [])].sort()).toEqual(["v=DMARC1; p=none", "v=DMARC1; p=reject"]);
    expect(report.dmarc).toBe(false);
  });

  it("throws the port's DnsUnavailableError, naming the name, when DNS cannot answer", async () => {
    publishAll();
    dns.failName("_dmarc.shop.example");
    const error = await verifier.check(FACTS).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DnsUnavailableError);
    expect((error as DnsUnavailableError).message).toContain("_dmarc.shop.example");
  });
});
