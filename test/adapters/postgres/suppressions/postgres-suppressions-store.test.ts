import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditNote } from "../../../../src/capabilities/audit/types.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { PostgresSuppressionsStore } from "../../../../src/adapters/postgres/suppressions/postgres-suppressions-store.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

const NOTE: AuditNote = {
  context: { actor: { kind: "operator", label: "operator" }, requestId: "req", clientIp: "" },
  action: "suppression.removed",
  details: { reason: "test" },
};

describe("PostgresSuppressionsStore", () => {
  let h: SendingHarness;
  let store: PostgresSuppressionsStore;

  beforeAll(async () => {
    h = await openSendingHarness();
    store = new PostgresSuppressionsStore(poolOf(h.orm));
  });

  afterAll(async () => {
    await h?.close();
  });

  const emails = async (companyId: string) => (await store.list(companyId, {}, null, 100)).map((row) => row.item.email);
  const audited = async (companyId: string) =>
    (await h.db.query<{ action: string }>(`select action from audit_event where company_id = $1`, [companyId])).rows.map((r) => r.action);

  it("adds, finds, lists newest first and removes an address, comparing it as given", async () => {
    const companyId = await h.newCompany();
    const message = randomUUID();
    expect(await store.add(companyId, { email: "old@example.com", reason: "manual", messageId: null })).toBe(true);
    expect(await store.add(companyId, { email: "new@example.com", reason: "bounce", messageId: message })).toBe(true);
    expect(await store.isListed(companyId, "new@example.com")).toBe(true);
    // Normalising is the capability's job (suppressionKey): the store compares exactly.
    expect(await store.isListed(companyId, "NEW@example.com")).toBe(false);
    expect((await store.list(companyId, {}, null, 10)).map((row) => row.item)).toEqual([
      { email: "new@example.com", reason: "bounce", messageId: message, createdAt: expect.any(Date) },
      { email: "old@example.com", reason: "manual", messageId: null, createdAt: expect.any(Date) },
    ]);
    expect(await store.find(companyId, "new@example.com")).toMatchObject({ reason: "bounce", messageId: message });
    expect(await store.remove(companyId, "old@example.com", () => NOTE)).toMatchObject({ email: "old@example.com", reason: "manual" });
    expect(await store.remove(companyId, "old@example.com", () => NOTE)).toBeUndefined();
    expect(await store.find(companyId, "old@example.com")).toBeUndefined();
    expect(await audited(companyId)).toEqual(["suppression.removed"]);
  });

  it("a removal refused by its decision changes nothing and writes no audit row", async () => {
    const companyId = await h.newCompany();
    await store.add(companyId, { email: "kept@example.com", reason: "complaint", messageId: null });
    await expect(
      store.remove(companyId, "kept@example.com", () => {
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(await store.isListed(companyId, "kept@example.com")).toBe(true);
    expect(await audited(companyId)).toEqual([]);
  });

  it("an audited addition writes its row only when it adds the address", async () => {
    const companyId = await h.newCompany();
    const added = { ...NOTE, action: "suppression.added" as const };
    expect(await store.addAudited(companyId, { email: "m@example.com", reason: "manual", messageId: null }, added)).toMatchObject({ created: true, entry: { email: "m@example.com" } });
    expect(await store.addAudited(companyId, { email: "m@example.com", reason: "manual", messageId: null }, added)).toMatchObject({ created: false, entry: { email: "m@example.com" } });
    expect(await audited(companyId)).toEqual(["suppression.added"]);
  });

  it("keeps the first entry of an address, also when 8 adds race: exactly one of them adds it", async () => {
    const companyId = await h.newCompany();
    const first = randomUUID();
    expect(await store.add(companyId, { email: "x@example.com", reason: "bounce", messageId: first })).toBe(true);
    expect(await store.add(companyId, { email: "x@example.com", reason: "complaint", messageId: randomUUID() })).toBe(false);
    expect(await store.find(companyId, "x@example.com")).toMatchObject({ email: "x@example.com", reason: "bounce", messageId: first });

    const added = await Promise.all(
      Array.from({ length: 8 }, () => store.add(companyId, { email: "race@example.com", reason: "manual", messageId: null })),
    );
    expect(added.filter(Boolean)).toHaveLength(1);
    const { rows } = await h.db.query(`select 1 from suppression where company_id = $1 and email = 'race@example.com'`, [companyId]);
    expect(rows).toHaveLength(1);
  });

  it("pages by (created_at, email) positions, filters by part of the address, reason and time; the pattern characters are literal", async () => {
    const companyId = await h.newCompany();
    for (const email of ["a_b@example.com", "axb@example.com", "c%d@example.com"]) await store.add(companyId, { email, reason: "manual", messageId: null });
    await h.db.query(`update suppression set created_at = '2030-01-01T00:00:00Z' where company_id = $1`, [companyId]);
    const first = await store.list(companyId, {}, null, 1);
    expect(first.map((row) => row.position)).toEqual([{ createdAt: "2030-01-01T00:00:00.000000Z", id: "c%d@example.com" }]);
    expect((await store.list(companyId, {}, first[0]?.position ?? null, 10)).map((row) => row.item.email)).toEqual(["axb@example.com", "a_b@example.com"]);
    expect((await store.list(companyId, { q: "a_b" }, null, 10)).map((row) => row.item.email)).toEqual(["a_b@example.com"]);
    expect((await store.list(companyId, { q: "%" }, null, 10)).map((row) => row.item.email)).toEqual(["c%d@example.com"]);
    expect(await store.list(companyId, { reason: "bounce" }, null, 10)).toEqual([]);
    expect(await store.list(companyId, { until: new Date("2030-01-01T00:00:00Z") }, null, 10)).toEqual([]);
    expect(await store.list(companyId, { since: new Date("2030-01-01T00:00:00Z") }, null, 10)).toHaveLength(3);
  });

  it("tenant isolation: every statement is scoped to the company; ids that cannot be row ids find nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    await store.add(a, { email: "shared@example.com", reason: "complaint", messageId: null });
    expect(await store.isListed(b, "shared@example.com")).toBe(false);
    expect(await emails(b)).toEqual([]);
    expect(await store.find(b, "shared@example.com")).toBeUndefined();
    expect(await store.remove(b, "shared@example.com", () => NOTE)).toBeUndefined();
    expect(await store.isListed(a, "shared@example.com")).toBe(true);
    // B can list the same address on its own.
    expect(await store.add(b, { email: "shared@example.com", reason: "manual", messageId: null })).toBe(true);

    for (const id of ["not-a-uuid", ""]) {
      expect(await store.isListed(id, "shared@example.com")).toBe(false);
      expect(await emails(id)).toEqual([]);
      expect(await store.find(id, "shared@example.com")).toBeUndefined();
      expect(await store.remove(id, "shared@example.com", () => NOTE)).toBeUndefined();
    }
  });
});
