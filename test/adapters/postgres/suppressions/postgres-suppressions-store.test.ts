import { randomUUID } from "node:crypto";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditNote } from "../../../../src/capabilities/audit/types.ts";
import { PostgresSuppressionsStore } from "../../../../src/adapters/postgres/suppressions/postgres-suppressions-store.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

const NOTE: AuditNote = {
  context: { actor: { kind: "operator", label: "operator" }, requestId: "req", clientIp: "" },
  action: "suppression.removed",
  details: { reason: "test" },
};

/**
 * The ORM as the store sees it, except that the first read inside one of its
 * transactions runs `meanwhile` first: another connection's change, committed
 * between the transaction's insert and its read, as a concurrent remove can.
 */
function changingBeforeFirstRead(orm: MikroORM, meanwhile: () => Promise<unknown>): MikroORM {
  let pending = true;
  const member = (target: object, key: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, key);
    return typeof value === "function" ? value.bind(target) : value;
  };
  const inTransaction = (em: EntityManager): EntityManager =>
    new Proxy(em, {
      get: (target, key) => {
        if (key !== "findOne" || !pending) return member(target, key);
        return async (...args: unknown[]): Promise<unknown> => {
          pending = false;
          await meanwhile();
          return Reflect.apply(target.findOne, target, args) as Promise<unknown>;
        };
      },
    });
  const forked = (em: EntityManager): EntityManager =>
    new Proxy(em, {
      get: (target, key) =>
        key === "transactional" ? <T>(work: (inner: EntityManager) => Promise<T>) => target.transactional((inner) => work(inTransaction(inner))) : member(target, key),
    });
  const em = new Proxy(orm.em, { get: (target, key) => (key === "fork" ? () => forked(target.fork()) : member(target, key)) });
  return new Proxy(orm, { get: (target, key) => (key === "em" ? em : member(target, key)) });
}

describe("PostgresSuppressionsStore", () => {
  let h: SendingHarness;
  let store: PostgresSuppressionsStore;

  beforeAll(async () => {
    h = await openSendingHarness();
    store = new PostgresSuppressionsStore(h.orm);
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

  it("of 8 concurrent audited additions of one address exactly one adds it and writes the one audit row", async () => {
    const companyId = await h.newCompany();
    const added = { ...NOTE, action: "suppression.added" as const };
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.addAudited(companyId, { email: "busy@example.com", reason: i % 2 === 0 ? "bounce" : "complaint", messageId: null }, added),
      ),
    );
    const created = outcomes.filter((outcome) => outcome.created);
    expect(created).toHaveLength(1);
    // Every call answers the entry that is listed: the winner's.
    for (const outcome of outcomes) expect(outcome.entry).toEqual(created[0]?.entry);
    expect(await store.find(companyId, "busy@example.com")).toEqual(created[0]?.entry);
    expect(await audited(companyId)).toEqual(["suppression.added"]);
  });

  it("an audited addition whose row is removed between its insert and its read adds the address again", async () => {
    const companyId = await h.newCompany();
    await store.add(companyId, { email: "gone@example.com", reason: "manual", messageId: null });
    const racing = new PostgresSuppressionsStore(
      changingBeforeFirstRead(h.orm, () => h.db.query(`delete from suppression where company_id = $1 and email = 'gone@example.com'`, [companyId])),
    );
    const added = { ...NOTE, action: "suppression.added" as const };
    const outcome = await racing.addAudited(companyId, { email: "gone@example.com", reason: "bounce", messageId: null }, added);
    expect(outcome).toMatchObject({ created: true, entry: { email: "gone@example.com", reason: "bounce" } });
    expect(await store.find(companyId, "gone@example.com")).toMatchObject({ reason: "bounce" });
    expect(await audited(companyId)).toEqual(["suppression.added"]);
  });

  it("of concurrent removals of one address exactly one removes it and writes the one audit row", async () => {
    const companyId = await h.newCompany();
    await store.add(companyId, { email: "twice@example.com", reason: "complaint", messageId: null });
    const decided: string[] = [];
    const removed = await Promise.all(
      Array.from({ length: 6 }, () =>
        store.remove(companyId, "twice@example.com", (entry) => {
          decided.push(entry.email);
          return NOTE;
        }),
      ),
    );
    expect(removed.filter((entry) => entry !== undefined)).toEqual([expect.objectContaining({ email: "twice@example.com", reason: "complaint" })]);
    // The lock makes the others wait and then find nothing: only the winner is asked.
    expect(decided).toEqual(["twice@example.com"]);
    expect(await store.isListed(companyId, "twice@example.com")).toBe(false);
    expect(await audited(companyId)).toEqual(["suppression.removed"]);
  });

  it("audited additions racing removals of one address always answer an entry, and each change has its audit row", async () => {
    const companyId = await h.newCompany();
    const added = { ...NOTE, action: "suppression.added" as const };
    let adds = 0;
    let removes = 0;
    for (let round = 0; round < 10; round += 1) {
      const [a, r, b] = await Promise.all([
        store.addAudited(companyId, { email: "flip@example.com", reason: "manual", messageId: null }, added),
        store.remove(companyId, "flip@example.com", () => NOTE),
        store.addAudited(companyId, { email: "flip@example.com", reason: "manual", messageId: null }, added),
      ]);
      expect(a.entry.email).toBe("flip@example.com");
      expect(b.entry.email).toBe("flip@example.com");
      adds += Number(a.created) + Number(b.created);
      removes += r ? 1 : 0;
    }
    const actions = await audited(companyId);
    expect(actions.filter((action) => action === "suppression.added")).toHaveLength(adds);
    expect(actions.filter((action) => action === "suppression.removed")).toHaveLength(removes);
    // Additions and removals alternate: listed exactly when there was one more addition.
    expect(adds - removes).toBe((await store.isListed(companyId, "flip@example.com")) ? 1 : 0);
  });

  it("pages through rows created in the same millisecond (microseconds apart, or at the same instant) without a repeat or a skip", async () => {
    const companyId = await h.newCompany();
    const times: Record<string, string> = {
      "a@example.com": "2030-01-01T00:00:00.000001Z",
      "b@example.com": "2030-01-01T00:00:00.000002Z",
      "c@example.com": "2030-01-01T00:00:00.000002Z",
      "d@example.com": "2030-01-01T00:00:00.000003Z",
      "e@example.com": "2030-01-01T00:00:00.000900Z",
    };
    for (const [email, at] of Object.entries(times)) {
      await store.add(companyId, { email, reason: "manual", messageId: null });
      await h.db.query(`update suppression set created_at = $3 where company_id = $1 and email = $2`, [companyId, email, at]);
    }
    const first = await store.list(companyId, {}, null, 3);
    expect(first.map((row) => row.position)).toEqual([
      { createdAt: "2030-01-01T00:00:00.000900Z", id: "e@example.com" },
      { createdAt: "2030-01-01T00:00:00.000003Z", id: "d@example.com" },
      { createdAt: "2030-01-01T00:00:00.000002Z", id: "c@example.com" },
    ]);
    const second = await store.list(companyId, {}, first.at(-1)?.position ?? null, 3);
    expect(second.map((row) => row.item.email)).toEqual(["b@example.com", "a@example.com"]);
    expect(await store.list(companyId, {}, second.at(-1)?.position ?? null, 3)).toEqual([]);
    // The filters hold across pages too.
    const filtered = await store.list(companyId, { q: "@example" }, first[0]?.position ?? null, 2);
    expect(filtered.map((row) => row.item.email)).toEqual(["d@example.com", "c@example.com"]);
  });

  it("tenant isolation of changes: another company's additions and removals leave this one's entry and audit rows alone", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const added = { ...NOTE, action: "suppression.added" as const };
    await store.addAudited(a, { email: "both@example.com", reason: "complaint", messageId: null }, added);
    expect(await store.addAudited(b, { email: "both@example.com", reason: "bounce", messageId: null }, added)).toMatchObject({
      created: true,
      entry: { reason: "bounce" },
    });
    expect(await store.remove(b, "both@example.com", () => NOTE)).toMatchObject({ reason: "bounce" });
    expect(await store.find(a, "both@example.com")).toMatchObject({ reason: "complaint" });
    expect(await audited(a)).toEqual(["suppression.added"]);
    expect((await audited(b)).sort()).toEqual(["suppression.added", "suppression.removed"]);
    expect(await store.list(b, { q: "both" }, null, 10)).toEqual([]);
  });
});
