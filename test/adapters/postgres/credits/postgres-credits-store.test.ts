import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresCreditsStore } from "../../../../src/adapters/postgres/credits/postgres-credits-store.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

describe("PostgresCreditsStore", () => {
  let h: SendingHarness;
  let store: PostgresCreditsStore;

  beforeAll(async () => {
    // Enough connections for the parallel charges to really overlap.
    h = await openSendingHarness({}, 12);
    store = new PostgresCreditsStore(poolOf(h.orm));
  });

  afterAll(async () => {
    await h?.close();
  });

  /** The company's ledger entries, newest first (the first `limit`). */
  async function entries(companyId: string, limit = 100) {
    return (await store.ledger(companyId, undefined, null, limit)).map((row) => row.item);
  }

  async function ledgerSum(companyId: string): Promise<number> {
    const { rows } = await h.db.query<{ sum: string | null }>(`select sum(delta) as sum from credit_ledger where company_id = $1`, [companyId]);
    return Number(rows[0]?.sum ?? 0);
  }

  it("knows which companies exist, by name; ids that cannot be row ids are simply unknown", async () => {
    const companyId = await h.newCompany("Named Co");
    expect(await store.companyName(companyId)).toBe("Named Co");
    expect(await store.companyName(randomUUID())).toBeUndefined();
    expect(await store.companyName("not-a-uuid")).toBeUndefined();
    expect(await store.balance("not-a-uuid")).toBe(0);
    expect(await store.ledger("not-a-uuid", undefined, null, 10)).toEqual([]);
  });

  it("reads the ledger newest first from a position, by reason, each entry with its position", async () => {
    const companyId = await h.newCompany();
    await store.adjust(companyId, { delta: 3, reason: "grant", note: "grant" });
    const message = randomUUID();
    expect(await store.charge(companyId, message)).toEqual({ outcome: "charged", balance: 2 });
    await store.charge(companyId, randomUUID());
    const all = await store.ledger(companyId, undefined, null, 10);
    expect(all.map((row) => row.item.reason)).toEqual(["charge", "charge", "grant"]);
    expect(all[0]?.position).toEqual({ createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/), id: String(all[0]?.item.id) });
    const after = await store.ledger(companyId, undefined, all[0]?.position ?? null, 10);
    expect(after.map((row) => row.item.id)).toEqual(all.slice(1).map((row) => row.item.id));
    expect((await store.ledger(companyId, "grant", null, 10)).map((row) => row.item.note)).toEqual(["grant"]);
    expect((await store.ledger(companyId, "charge", null, 1)).map((row) => row.item.messageId)).not.toContain(message);
  });

  it("creates the wallet on the first grant only: reading and refused changes leave no row behind", async () => {
    const companyId = await h.newCompany();
    expect(await store.balance(companyId)).toBe(0);
    expect(await store.adjust(companyId, { delta: -1, reason: "adjustment", note: "take one" })).toEqual({ kind: "below_zero", balance: 0 });
    expect((await h.db.query(`select 1 from credit_wallet where company_id = $1`, [companyId])).rows).toHaveLength(0);
    expect(await entries(companyId)).toEqual([]);

    expect(await store.adjust(companyId, { delta: 3, reason: "grant", note: "welcome" })).toEqual({ kind: "applied", balance: 3 });
    expect(await store.adjust(companyId, { delta: -4, reason: "adjustment", note: "too much" })).toEqual({ kind: "below_zero", balance: 3 });
    expect((await entries(companyId)).map(({ delta, reason, note }) => ({ delta, reason, note }))).toEqual([
      { delta: 3, reason: "grant", note: "welcome" },
    ]);
  });

  it("20 parallel charges of distinct messages against a balance of 5: exactly 5 charged, balance 0", async () => {
    const companyId = await h.newCompany();
    await store.adjust(companyId, { delta: 5, reason: "grant", note: "grant" });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.charge(companyId, randomUUID())));
    expect(outcomes.filter((o) => o.outcome === "charged")).toHaveLength(5);
    expect(outcomes.filter((o) => o.outcome === "insufficient")).toHaveLength(15);
    // Each charge says the balance it left: 4, 3, 2, 1 and 0, once each.
    expect(outcomes.flatMap((o) => (o.outcome === "charged" ? [o.balance] : [])).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await store.balance(companyId)).toBe(0);
    expect((await entries(companyId)).filter((e) => e.reason === "charge")).toHaveLength(5);
  });

  it("10 parallel charges of the same message: one charge; 10 parallel refunds: one refund", async () => {
    const companyId = await h.newCompany();
    await store.adjust(companyId, { delta: 5, reason: "grant", note: "grant" });
    const message = randomUUID();
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => store.charge(companyId, message)));
    expect(outcomes.filter((o) => o.outcome === "charged")).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === "already_charged")).toHaveLength(9);
    expect(await store.balance(companyId)).toBe(4);

    const refunds = await Promise.all(Array.from({ length: 10 }, () => store.refund(companyId, message)));
    expect(refunds.filter((o) => o === "refunded")).toHaveLength(1);
    expect(refunds.filter((o) => o === "already_refunded")).toHaveLength(9);
    expect(await store.balance(companyId)).toBe(5);
  });

  it("concurrent grants, charges and removals keep balance and ledger in step", async () => {
    const companyId = await h.newCompany();
    await store.adjust(companyId, { delta: 10, reason: "grant", note: "grant" });
    await Promise.all([
      ...Array.from({ length: 8 }, () => store.charge(companyId, randomUUID())),
      ...Array.from({ length: 4 }, () => store.adjust(companyId, { delta: 2, reason: "grant", note: "top up" })),
      store.adjust(companyId, { delta: -3, reason: "adjustment", note: "remove" }),
    ]);
    expect(await store.balance(companyId)).toBe(await ledgerSum(companyId));
    expect(await store.balance(companyId)).toBeGreaterThanOrEqual(0);
  });

  it("an insufficient charge records nothing", async () => {
    const companyId = await h.newCompany();
    expect(await store.charge(companyId, randomUUID())).toEqual({ outcome: "insufficient" });
    expect(await entries(companyId)).toEqual([]);
    expect(await ledgerSum(companyId)).toBe(0);
  });

  it("tenant isolation: a message charged to A is neither charged again nor refunded through B", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    await store.adjust(a, { delta: 2, reason: "grant", note: "A" });
    await store.adjust(b, { delta: 2, reason: "grant", note: "B" });
    const message = randomUUID();
    expect(await store.charge(a, message)).toEqual({ outcome: "charged", balance: 1 });
    expect(await store.charge(b, message)).toEqual({ outcome: "charged_elsewhere" });
    expect(await store.refund(b, message)).toBe("not_charged");
    expect(await store.balance(a)).toBe(1);
    expect(await store.balance(b)).toBe(2);
    expect((await entries(b)).map((e) => e.reason)).toEqual(["grant"]);
  });
});
