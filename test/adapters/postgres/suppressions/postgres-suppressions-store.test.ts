import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { PostgresSuppressionsStore } from "../../../../src/adapters/postgres/suppressions/postgres-suppressions-store.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

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

  it("adds, finds, lists newest first and removes an address, comparing it as given", async () => {
    const companyId = await h.newCompany();
    const message = randomUUID();
    expect(await store.add(companyId, { email: "old@example.com", reason: "manual", messageId: null })).toBe(true);
    expect(await store.add(companyId, { email: "new@example.com", reason: "bounce", messageId: message })).toBe(true);
    expect(await store.isListed(companyId, "new@example.com")).toBe(true);
    // Normalising is the capability's job (suppressionKey): the store compares exactly.
    expect(await store.isListed(companyId, "NEW@example.com")).toBe(false);
    expect(await store.list(companyId)).toEqual([
      { email: "new@example.com", reason: "bounce", messageId: message, createdAt: expect.any(Date) },
      { email: "old@example.com", reason: "manual", messageId: null, createdAt: expect.any(Date) },
    ]);
    expect(await store.remove(companyId, "old@example.com")).toBe(true);
    expect(await store.remove(companyId, "old@example.com")).toBe(false);
  });

  it("keeps the first entry of an address, also when 8 adds race: exactly one of them adds it", async () => {
    const companyId = await h.newCompany();
    const first = randomUUID();
    expect(await store.add(companyId, { email: "x@example.com", reason: "bounce", messageId: first })).toBe(true);
    expect(await store.add(companyId, { email: "x@example.com", reason: "complaint", messageId: randomUUID() })).toBe(false);
    expect(await store.list(companyId)).toMatchObject([{ email: "x@example.com", reason: "bounce", messageId: first }]);

    const added = await Promise.all(
      Array.from({ length: 8 }, () => store.add(companyId, { email: "race@example.com", reason: "manual", messageId: null })),
    );
    expect(added.filter(Boolean)).toHaveLength(1);
    const { rows } = await h.db.query(`select 1 from suppression where company_id = $1 and email = 'race@example.com'`, [companyId]);
    expect(rows).toHaveLength(1);
  });

  it("tenant isolation: every statement is scoped to the company; ids that cannot be row ids find nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    await store.add(a, { email: "shared@example.com", reason: "complaint", messageId: null });
    expect(await store.isListed(b, "shared@example.com")).toBe(false);
    expect(await store.list(b)).toEqual([]);
    expect(await store.remove(b, "shared@example.com")).toBe(false);
    expect(await store.isListed(a, "shared@example.com")).toBe(true);
    // B can list the same address on its own.
    expect(await store.add(b, { email: "shared@example.com", reason: "manual", messageId: null })).toBe(true);

    expect(await store.companyExists(a)).toBe(true);
    expect(await store.companyExists(randomUUID())).toBe(false);
    for (const id of ["not-a-uuid", ""]) {
      expect(await store.companyExists(id)).toBe(false);
      expect(await store.isListed(id, "shared@example.com")).toBe(false);
      expect(await store.list(id)).toEqual([]);
      expect(await store.remove(id, "shared@example.com")).toBe(false);
    }
  });
});
