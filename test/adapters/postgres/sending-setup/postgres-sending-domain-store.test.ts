import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresCompanyDirectory } from "../../../../src/adapters/postgres/sending-setup/postgres-company-directory.ts";
import { PostgresSendingDomainStore } from "../../../../src/adapters/postgres/sending-setup/postgres-sending-domain-store.ts";
import type { NewSendingDomain } from "../../../../src/capabilities/sending-setup/index.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

function newDomain(domain: string): NewSendingDomain {
  return {
    domain,
    returnPathDomain: `bounces.${domain}`,
    dkimSelector: "tm0123abcd",
    dkimPublicKey: "MIIBIjAN",
    dkimPrivateKeySealed: "v1.iv.tag.ciphertext",
  };
}

describe("PostgresSendingDomainStore and PostgresCompanyDirectory", () => {
  let h: SendingHarness;
  let store: PostgresSendingDomainStore;

  beforeAll(async () => {
    h = await openSendingHarness();
    store = new PostgresSendingDomainStore(h.orm);
  });

  afterAll(async () => {
    await h?.close();
  });

  it("adds a domain, unverified, and finds it by id, by name and in the list (oldest first)", async () => {
    const companyId = await h.newCompany();
    const added = await store.add(companyId, newDomain("one.example"));
    expect(added).toEqual({
      id: expect.any(String),
      companyId,
      ...newDomain("one.example"),
      dkimVerified: false,
      spfVerified: false,
      dmarcVerified: false,
      verificationOverridden: false,
      lastCheckedAt: null,
      lastCheck: null,
      verifiedAt: null,
      createdAt: expect.any(Date),
    });
    const second = await store.add(companyId, newDomain("two.example"));
    expect(await store.find(companyId, added?.id ?? "")).toEqual(added);
    expect(await store.findByName(companyId, "one.example")).toEqual(added);
    expect((await store.list(companyId)).map((d) => d.id)).toEqual([added?.id, second?.id]);
  });

  it("refuses a second domain of the same name, also when three adds race: exactly one is added", async () => {
    const companyId = await h.newCompany();
    expect(await store.add(companyId, newDomain("twice.example"))).not.toBeNull();
    expect(await store.add(companyId, newDomain("twice.example"))).toBeNull();

    const results = await Promise.all([1, 2, 3].map(() => store.add(companyId, newDomain("race.example"))));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect((await store.list(companyId)).map((d) => d.domain)).toEqual(["twice.example", "race.example"]);
  });

  it("stores the outcome of a DNS check, and an override without touching the checks", async () => {
    const companyId = await h.newCompany();
    const added = await store.add(companyId, newDomain("checked.example"));
    const at = new Date("2025-06-01T12:00:00.000Z");
    const records = [
      { purpose: "dkim", state: "verified", found: ["v=DKIM1; p=x"] },
      { purpose: "spf", state: "wrong", found: ["v=spf1 -all"] },
      { purpose: "return_path", state: "missing", found: [] },
      { purpose: "dmarc", state: "verified", found: ["v=DMARC1; p=none"] },
    ] as const;
    const report = { dkim: true, spf: false, dmarc: true, records };
    const checked = await store.recordVerification(companyId, added?.id ?? "", { kind: "checked", report, at });
    expect(checked).toMatchObject({ dkimVerified: true, spfVerified: false, dmarcVerified: true, verificationOverridden: false, lastCheckedAt: at, lastCheck: records, verifiedAt: null });

    const later = new Date("2025-06-02T12:00:00.000Z");
    const overridden = await store.recordVerification(companyId, added?.id ?? "", { kind: "overridden", at: later });
    expect(overridden).toMatchObject({ dkimVerified: true, spfVerified: false, verificationOverridden: true, lastCheckedAt: at, verifiedAt: later });
    const { rows } = await h.db.query<{ verification_overridden: boolean; spf_verified: boolean; last_checked_at: Date }>(
      `select verification_overridden, spf_verified, last_checked_at from sending_domain where id = $1`,
      [added?.id],
    );
    expect(rows[0]).toEqual({ verification_overridden: true, spf_verified: false, last_checked_at: at });
  });

  it("tenant isolation: another company finds, lists and changes nothing; ids that cannot be row ids find nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const mine = await store.add(a, newDomain("mine.example"));
    const id = mine?.id ?? "";
    expect(await store.find(b, id)).toBeNull();
    expect(await store.findByName(b, "mine.example")).toBeNull();
    expect(await store.list(b)).toEqual([]);
    expect(await store.recordVerification(b, id, { kind: "overridden", at: new Date() })).toBeNull();
    expect((await store.find(a, id))?.verificationOverridden).toBe(false);
    // B may have a domain of the same name.
    expect((await store.add(b, newDomain("mine.example")))?.id).not.toBe(id);

    for (const bad of ["not-a-uuid", ""]) {
      expect(await store.find(bad, id)).toBeNull();
      expect(await store.find(a, bad)).toBeNull();
      expect(await store.findByName(bad, "mine.example")).toBeNull();
      expect(await store.list(bad)).toEqual([]);
      expect(await store.recordVerification(a, bad, { kind: "overridden", at: new Date() })).toBeNull();
    }
  });

  it("the company directory answers a company's id as stored, or null", async () => {
    const companies = new PostgresCompanyDirectory(h.orm);
    const companyId = await h.newCompany();
    expect(await companies.findCompanyId(companyId)).toBe(companyId);
    // The one spelling: what DKIM seal contexts and every row are bound to.
    expect(await companies.findCompanyId(companyId.toUpperCase())).toBe(companyId);
    expect(await companies.findCompanyId(randomUUID())).toBeNull();
    expect(await companies.findCompanyId("not-a-uuid")).toBeNull();
  });
});
