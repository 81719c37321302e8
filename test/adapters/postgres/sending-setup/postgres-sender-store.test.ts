import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSenderStore } from "../../../../src/adapters/postgres/sending-setup/postgres-sender-store.ts";
import { PostgresSendingDomainStore } from "../../../../src/adapters/postgres/sending-setup/postgres-sending-domain-store.ts";
import type { SenderRecord } from "../../../../src/capabilities/sending-setup/index.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

describe("PostgresSenderStore", () => {
  let h: SendingHarness;
  let store: PostgresSenderStore;
  let domains: PostgresSendingDomainStore;

  beforeAll(async () => {
    h = await openSendingHarness();
    store = new PostgresSenderStore(h.orm);
    domains = new PostgresSendingDomainStore(h.orm);
  });

  afterAll(async () => {
    await h?.close();
  });

  async function companyWithDomain(domain = "example.com"): Promise<{ companyId: string; domainId: string }> {
    const companyId = await h.newCompany();
    const added = await domains.add(companyId, {
      domain,
      returnPathDomain: `bounces.${domain}`,
      dkimSelector: "tm0123abcd",
      dkimPublicKey: "MIIBIjAN",
      dkimPrivateKeySealed: "v1.iv.tag.ciphertext",
    });
    if (!added) throw new Error("domain not added");
    return { companyId, domainId: added.id };
  }

  function add(companyId: string, domainId: string, email: string, isDefault: boolean): Promise<SenderRecord> {
    return store.add(companyId, domainId, () => ({ email, name: null, isDefault }));
  }

  async function defaults(companyId: string): Promise<string[]> {
    const { rows } = await h.db.query<{ email: string }>(`select email from sender where company_id = $1 and is_default`, [companyId]);
    return rows.map((row) => row.email);
  }

  it("adds senders with their domain; the plan sees the senders before it, a new default takes the flag", async () => {
    const { companyId, domainId } = await companyWithDomain();
    const seen: string[][] = [];
    const first = await store.add(companyId, domainId, (senders) => {
      seen.push(senders.map((s) => s.email));
      return { email: "first@example.com", name: "First", isDefault: true };
    });
    expect(first).toMatchObject({ companyId, email: "first@example.com", name: "First", isDefault: true, domain: { id: domainId, domain: "example.com" } });
    await store.add(companyId, domainId, (senders) => {
      seen.push(senders.map((s) => s.email));
      return { email: "second@example.com", name: null, isDefault: true };
    });
    expect(seen).toEqual([[], ["first@example.com"]]);
    expect(await defaults(companyId)).toEqual(["second@example.com"]);
    expect((await store.list(companyId)).map((s) => [s.email, s.isDefault])).toEqual([
      ["first@example.com", false],
      ["second@example.com", true],
    ]);
    expect((await store.findDefault(companyId))?.email).toBe("second@example.com");
    expect(await store.find(companyId, first.id)).toMatchObject({ email: "first@example.com", domain: { id: domainId } });
  });

  it("writes nothing when the plan throws", async () => {
    const { companyId, domainId } = await companyWithDomain();
    await add(companyId, domainId, "keep@example.com", true);
    await expect(
      store.add(companyId, domainId, () => {
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect((await store.list(companyId)).map((s) => s.email)).toEqual(["keep@example.com"]);
    expect(await defaults(companyId)).toEqual(["keep@example.com"]);
  });

  it("keeps exactly one default under concurrent switches and concurrent default adds", async () => {
    const { companyId, domainId } = await companyWithDomain();
    const senders: SenderRecord[] = [];
    for (let i = 0; i < 6; i++) senders.push(await add(companyId, domainId, `s${i}@example.com`, i === 0));

    expect(await store.makeDefault(companyId, senders[3]?.id ?? "")).toMatchObject({ id: senders[3]?.id, isDefault: true });
    expect(await defaults(companyId)).toEqual(["s3@example.com"]);

    await Promise.all(senders.map((s) => store.makeDefault(companyId, s.id)));
    expect(await defaults(companyId)).toHaveLength(1);

    await Promise.all([1, 2, 3, 4].map((i) => add(companyId, domainId, `race${i}@example.com`, true)));
    expect(await defaults(companyId)).toHaveLength(1);
  });

  it("tenant isolation: another company's senders are not found, listed, nor made default", async () => {
    const a = await companyWithDomain("a.example");
    const b = await companyWithDomain("b.example");
    const senderA = await add(a.companyId, a.domainId, "x@a.example", true);
    await add(b.companyId, b.domainId, "x@b.example", true);

    expect((await store.list(b.companyId)).map((s) => s.email)).toEqual(["x@b.example"]);
    expect(await store.find(b.companyId, senderA.id)).toBeNull();
    expect(await store.makeDefault(b.companyId, senderA.id)).toBeNull();
    expect((await store.findDefault(b.companyId))?.email).toBe("x@b.example");
    expect(await defaults(a.companyId)).toEqual(["x@a.example"]);
    // A domain of another company cannot carry a sender.
    await expect(add(b.companyId, a.domainId, "y@a.example", false)).rejects.toThrow();
    expect((await store.list(b.companyId)).map((s) => s.email)).toEqual(["x@b.example"]);

    for (const bad of ["not-a-uuid", ""]) {
      expect(await store.list(bad)).toEqual([]);
      expect(await store.find(bad, senderA.id)).toBeNull();
      expect(await store.find(a.companyId, bad)).toBeNull();
      expect(await store.findDefault(bad)).toBeNull();
      expect(await store.makeDefault(a.companyId, bad)).toBeNull();
    }
  });
});
