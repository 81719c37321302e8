import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { DomainDegradedNotice, SendingDomainView, SendingSetup } from "../../../src/capabilities/sending-setup/index.ts";
import { createSecretSealer } from "../../../src/capabilities/sending-setup/key-sealing.ts";
import { expectApiError, OPERATOR_AUDIT } from "../accounts/harness.ts";
import { startTestDnsServer, type TestDnsServer } from "../../support/dns-server.ts";
import { openSendingHarness, SETUP_CONFIG, type SendingHarness } from "./harness.ts";

function record(view: SendingDomainView, purpose: string): { name: string; value: string } {
  const found = view.dnsRecords.find((r) => r.purpose === purpose);
  if (!found) throw new Error(`no ${purpose} record`);
  return found;
}

/** Publishes the records the domain asks for, except what `skip` names. */
function publish(dns: TestDnsServer, view: SendingDomainView, skip: { dkim?: boolean; spf?: boolean; mx?: boolean; dmarc?: boolean } = {}): void {
  if (!skip.dkim) dns.addTxt(record(view, "dkim").name, record(view, "dkim").value);
  if (!skip.spf) dns.addTxt(record(view, "spf").name, record(view, "spf").value);
  if (!skip.mx) {
    const [priority, host] = record(view, "return_path").value.split(" ");
    dns.addMx(record(view, "return_path").name, host ?? "", Number(priority));
  }
  if (!skip.dmarc) dns.addTxt(record(view, "dmarc").name, record(view, "dmarc").value);
}

describe("sending domains", () => {
  let h: SendingHarness;
  let dns: TestDnsServer;
  let setup: SendingSetup;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    h = await openSendingHarness({ dnsServers: [dns.address] });
    setup = h.setup;
  });

  afterAll(async () => {
    await h?.close();
    await dns?.close();
  });

  beforeEach(() => dns.clear());

  describe("create", () => {
    it("generates a DKIM key and lists the records to publish, nothing verified yet", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "Example.COM.", audit: OPERATOR_AUDIT });
      expect(domain).toMatchObject({
        companyId,
        domain: "example.com",
        returnPathDomain: "bounces.example.com",
        dkimVerified: false,
        spfVerified: false,
        dmarcVerified: false,
        verified: false,
        status: "pending",
        verificationOverridden: false,
        lastCheckedAt: null,
        verifiedAt: null,
      });
      expect(domain.dnsRecords.map((r) => [r.state, r.found])).toEqual(Array(4).fill(["unchecked", []]));
      expect(domain.dkimSelector).toMatch(/^tm[0-9a-f]{8}$/);

      const dkim = record(domain, "dkim");
      expect(dkim.name).toBe(`${domain.dkimSelector}._domainkey.example.com`);
      const publicKey = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/=]+)$/.exec(dkim.value)?.[1];
      expect(publicKey).toBeDefined();
      const key = createPublicKey({ key: Buffer.from(publicKey ?? "", "base64"), format: "der", type: "spki" });
      expect(key.asymmetricKeyType).toBe("rsa");
      expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);

      expect(domain.dnsRecords.map(({ type, name, value, purpose, verified }) => ({ type, name, value, purpose, verified }))).toEqual([
        { type: "TXT", name: dkim.name, value: dkim.value, purpose: "dkim", verified: false },
        { type: "TXT", name: "bounces.example.com", value: "v=spf1 include:spf.mail.test -all", purpose: "spf", verified: false },
        { type: "MX", name: "bounces.example.com", value: "10 feedback.mail.test", purpose: "return_path", verified: false },
        { type: "TXT", name: "_dmarc.example.com", value: "v=DMARC1; p=none", purpose: "dmarc", verified: false },
      ]);
    });

    it("stores the private key sealed, never as plain PEM, and bound to its company and domain", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "sealed.example", audit: OPERATOR_AUDIT });
      const { rows } = await h.db.query<{ dkim_private_key_sealed: string; dkim_public_key: string }>(
        `select dkim_private_key_sealed, dkim_public_key from sending_domain where id = $1`,
        [domain.id],
      );
      const sealed = rows[0]?.dkim_private_key_sealed ?? "";
      expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(sealed).not.toContain("PRIVATE KEY");
      expect(Buffer.from(sealed.split(".")[3] ?? "", "base64url").toString("latin1")).not.toContain("PRIVATE KEY");

      const sealer = createSecretSealer(SETUP_CONFIG.dataEncryptionKey);
      const pem = sealer.unseal(sealed, `sending_domain:${companyId}:sealed.example`);
      const derived = createPublicKey(createPrivateKey(pem)).export({ type: "spki", format: "der" }).toString("base64");
      expect(derived).toBe(rows[0]?.dkim_public_key);
      // Another context (company) or another key does not open it.
      expect(() => sealer.unseal(sealed, `sending_domain:${companyId}:other.example`)).toThrow();
      expect(() => createSecretSealer("another key").unseal(sealed, `sending_domain:${companyId}:sealed.example`)).toThrow();
    });

    it("normalises internationalised names to their A-label form", async () => {
      const companyId = await h.newCompany();
      expect((await setup.domains.create({ companyId, domain: "Bücher.example", audit: OPERATOR_AUDIT })).domain).toBe("xn--bcher-kva.example");
    });

    it.each([
      ["empty", ""],
      ["one label", "localhost"],
      ["empty label", "a..example.com"],
      ["leading hyphen", "-a.example.com"],
      ["IP address", "192.0.2.1"],
      ["an address", "user@example.com"],
      ["a URL", "https://example.com"],
      ["underscore", "my_domain.example"],
      ["too long", `${"a".repeat(60)}.${"b".repeat(60)}.${"c".repeat(60)}.${"d".repeat(60)}.com`],
    ])("refuses %s", async (_label, name) => {
      const companyId = await h.newCompany();
      const error = await expectApiError(setup.domains.create({ companyId, domain: name, audit: OPERATOR_AUDIT }), "VALIDATION_ERROR");
      expect(error.message).toMatch(/^domain: /);
    });

    it("refuses a domain the company already has, also when creates race", async () => {
      const companyId = await h.newCompany();
      await setup.domains.create({ companyId, domain: "twice.example", audit: OPERATOR_AUDIT });
      await expectApiError(setup.domains.create({ companyId, domain: "TWICE.example", audit: OPERATOR_AUDIT }), "VALIDATION_ERROR");

      // The store decides a race (test/adapters/postgres/sending-setup); the loser gets the same answer.
      const results = await Promise.allSettled([1, 2, 3].map(() => setup.domains.create({ companyId, domain: "race.example", audit: OPERATOR_AUDIT })));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect((r.reason as { code: string }).code).toBe("VALIDATION_ERROR");
      expect((await setup.domains.list({ companyId })).map((d) => d.domain)).toEqual(["twice.example", "race.example"]);
    });

    it("answers NOT_FOUND for an unknown company", async () => {
      await expectApiError(setup.domains.create({ companyId: "00000000-0000-4000-8000-000000000000", domain: "x.example", audit: OPERATOR_AUDIT }), "NOT_FOUND");
      await expectApiError(setup.domains.create({ companyId: "not-a-uuid", domain: "x.example", audit: OPERATOR_AUDIT }), "NOT_FOUND");
      await expectApiError(setup.domains.list({ companyId: "00000000-0000-4000-8000-000000000000" }), "NOT_FOUND");
    });
  });

  describe("check (real DNS lookups against a local authoritative server)", () => {
    it("verifies a domain whose DKIM, SPF, MX and DMARC records are all published", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "ok.example", audit: OPERATOR_AUDIT });
      publish(dns, domain);
      const verified = await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT });
      expect(verified).toMatchObject({ dkimVerified: true, spfVerified: true, dmarcVerified: true, verified: true, verificationOverridden: false });
      expect(verified.lastCheckedAt).toBeInstanceOf(Date);
      expect(verified.dnsRecords.every((r) => r.verified)).toBe(true);
      // The lookups really went to the server, by name and type (TXT 16, MX 15).
      expect(dns.queries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: `${domain.dkimSelector}._domainkey.ok.example`, type: 16 }),
          expect.objectContaining({ name: "bounces.ok.example", type: 16 }),
          expect.objectContaining({ name: "bounces.ok.example", type: 15 }),
          expect.objectContaining({ name: "_dmarc.ok.example", type: 16 }),
        ]),
      );
      // Stored: a later list shows the same state.
      expect((await setup.domains.list({ companyId }))[0]).toMatchObject({ verified: true, dkimVerified: true });
    });

    it("does not verify when the DKIM record is missing", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "nodkim.example", audit: OPERATOR_AUDIT });
      publish(dns, domain, { dkim: true });
      const result = await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT });
      expect(result).toMatchObject({ dkimVerified: false, spfVerified: true, dmarcVerified: true, verified: false });
      expect(record(result, "dkim")).toMatchObject({ verified: false });
    });

    it("does not verify when the DKIM record holds another key", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "wrongdkim.example", audit: OPERATOR_AUDIT });
      publish(dns, domain, { dkim: true });
      const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "der" }).toString("base64");
      dns.addTxt(record(domain, "dkim").name, `v=DKIM1; k=rsa; p=${other}`);
      expect(await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT })).toMatchObject({ dkimVerified: false, verified: false });
    });

    it("accepts the DKIM key split into chunks and spread with whitespace, beside other TXT records", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "chunked.example", audit: OPERATOR_AUDIT });
      publish(dns, domain, { dkim: true });
      const key = /p=(.+)$/.exec(record(domain, "dkim").value)?.[1] ?? "";
      dns.addTxt(record(domain, "dkim").name, "unrelated=1", ["v=DKIM1;  k=rsa;\tp=", key.slice(0, 200), " ", key.slice(200)]);
      expect(await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT })).toMatchObject({ dkimVerified: true, verified: true });
    });

    it("needs the SPF include and the MX at the return-path domain, and exactly one DMARC record", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "partial.example", audit: OPERATOR_AUDIT });

      publish(dns, domain, { spf: true });
      dns.addTxt("bounces.partial.example", "v=spf1 include:_spf.elsewhere.example -all");
      expect(await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT })).toMatchObject({ spfVerified: false, verified: false });

      dns.clear();
      publish(dns, domain, { mx: true });
      expect(await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT })).toMatchObject({ spfVerified: false, verified: false });

      dns.clear();
      publish(dns, domain);
      dns.addTxt("bounces.partial.example", "v=spf1 -all"); // two SPF records: a permanent error for receivers
      expect(await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT })).toMatchObject({ spfVerified: false, dkimVerified: true });

      dns.clear();
      publish(dns, domain, { dmarc: true });
      expect(await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT })).toMatchObject({ dmarcVerified: false, spfVerified: true, verified: false });

      dns.clear();
      publish(dns, domain);
      expect(await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT })).toMatchObject({ verified: true });
    });

    it("a verified domain whose records were removed is degraded: still sendable, its owners told once per fall", async () => {
      const companyId = await h.newCompany();
      const told: DomainDegradedNotice[] = [];
      const watched = h.setupWith({ dnsServers: [dns.address] }, { degradedAlert: { domainDegraded: async (notice) => void told.push(notice) } });
      const domain = await watched.domains.create({ companyId, domain: "removed.example", audit: OPERATOR_AUDIT });
      publish(dns, domain);
      const verified = await watched.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT });
      expect(verified).toMatchObject({ verified: true, status: "verified" });
      expect(verified.verifiedAt).toBeInstanceOf(Date);
      dns.clear(record(domain, "dkim").name);
      const degraded = await watched.domains.check({ companyId, domainId: domain.id });
      expect(degraded).toMatchObject({ status: "degraded", verified: true, dkimVerified: false, spfVerified: true, verifiedAt: verified.verifiedAt });
      expect(told.map((notice) => [notice.companyId, notice.domainId, notice.records.map((r) => [r.purpose, r.state])])).toEqual([
        [companyId, domain.id, [["dkim", "missing"]]],
      ]);
      // Still degraded: nobody is told again.
      dns.clear();
      expect((await watched.domains.check({ companyId, domainId: domain.id })).status).toBe("degraded");
      expect(told).toHaveLength(1);
      // Back, and lost again: a new fall.
      publish(dns, domain);
      expect((await watched.domains.check({ companyId, domainId: domain.id })).status).toBe("verified");
      dns.clear(record(domain, "return_path").name);
      expect((await watched.domains.check({ companyId, domainId: domain.id })).status).toBe("degraded");
      expect(told).toHaveLength(2);
      expect(told[1]?.records.map((r) => [r.purpose, r.state])).toEqual([
        ["spf", "missing"],
        ["return_path", "missing"],
      ]);
    });

    it("changes nothing and answers UNAVAILABLE when DNS cannot answer", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "servfail.example", audit: OPERATOR_AUDIT });
      publish(dns, domain);
      const verified = await setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT });
      dns.failName("_dmarc.servfail.example");
      const error = await expectApiError(setup.domains.check({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT }), "SERVICE_UNAVAILABLE");
      expect(error.message).toContain("_dmarc.servfail.example");
      expect(await setup.domains.get({ companyId, domainId: domain.id })).toMatchObject({ verified: true, lastCheckedAt: verified.lastCheckedAt });
    });

    it("override marks the domain verified without DNS and records it", async () => {
      const companyId = await h.newCompany();
      const domain = await setup.domains.create({ companyId, domain: "override.example", audit: OPERATOR_AUDIT });
      const before = dns.queries.length;
      const result = await setup.domains.overrideVerification({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT });
      expect(result).toMatchObject({ verified: true, verificationOverridden: true, dkimVerified: false, lastCheckedAt: null });
      expect(dns.queries.length).toBe(before);
      // Stored: a later read shows it.
      expect(await setup.domains.get({ companyId, domainId: domain.id })).toMatchObject({ verified: true, verificationOverridden: true });
    });

    it("refuses override when the deployment disables it", async () => {
      const companyId = await h.newCompany();
      const strict = h.setupWith({ allowVerificationOverride: false, dnsServers: [dns.address] });
      const domain = await strict.domains.create({ companyId, domain: "strict.example", audit: OPERATOR_AUDIT });
      await expectApiError(strict.domains.overrideVerification({ companyId, domainId: domain.id, audit: OPERATOR_AUDIT }), "FORBIDDEN");
      expect((await strict.domains.get({ companyId, domainId: domain.id })).verified).toBe(false);
    });
  });

  describe("tenant isolation", () => {
    it("another company can neither see, nor verify, nor override a domain", async () => {
      const a = await h.newCompany("A");
      const b = await h.newCompany("B");
      const domain = await setup.domains.create({ companyId: a, domain: "mine.example", audit: OPERATOR_AUDIT });
      expect(await setup.domains.list({ companyId: b })).toEqual([]);
      await expectApiError(setup.domains.get({ companyId: b, domainId: domain.id }), "NOT_FOUND");
      await expectApiError(setup.domains.check({ companyId: b, domainId: domain.id, audit: OPERATOR_AUDIT }), "NOT_FOUND");
      await expectApiError(setup.domains.overrideVerification({ companyId: b, domainId: domain.id, audit: OPERATOR_AUDIT }), "NOT_FOUND");
      expect((await setup.domains.get({ companyId: a, domainId: domain.id })).verified).toBe(false);
      // B may add the same domain name: it gets its own key and selector.
      const theirs = await setup.domains.create({ companyId: b, domain: "mine.example", audit: OPERATOR_AUDIT });
      expect(theirs.id).not.toBe(domain.id);
      expect(theirs.dkimSelector).not.toBe(domain.dkimSelector);
    });
  });
});
