import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDnsVerifier } from "../../../src/adapters/dns/dns-verifier.ts";
import { DnsUnavailableError, type DnsVerifier, type DomainDnsFacts } from "../../../src/capabilities/sending-setup/index.ts";
import { startTestDnsServer, type TestDnsServer } from "../../support/dns-server.ts";

const FACTS: DomainDnsFacts = {
  domain: "shop.example",
  returnPathDomain: "bounces.shop.example",
  dkimSelector: "tm00c0ffee",
  dkimPublicKey: "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAabc+/def==",
};

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
    expect(await verifier.check(FACTS)).toEqual({ dkim: true, spf: true, dmarc: true });
    dns.clear();
    expect(await verifier.check(FACTS)).toEqual({ dkim: false, spf: false, dmarc: false });
  });

  it("SPF needs both the include and the MX of the return-path domain", async () => {
    publishAll();
    dns.clear("bounces.shop.example");
    dns.addTxt("bounces.shop.example", "v=spf1 include:spf.mail.test -all");
    expect(await verifier.check(FACTS)).toEqual({ dkim: true, spf: false, dmarc: true });
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
