import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PostgresKeyUsageStore } from "../../../src/adapters/postgres/accounts/postgres-key-usage-store.ts";
import { pgPool, type Pool } from "../../../src/adapters/postgres/sql.ts";
import { KeyUsageBatcher } from "../../../src/capabilities/accounts/index.ts";
import { asOperator, openHarness, type Harness } from "./harness.ts";

/** SQL texts sent through `pool.query` since the spy was installed. */
function statements(spy: { mock: { calls: unknown[][] } }): string[] {
  return spy.mock.calls.map(([query]) => (typeof query === "string" ? query : (query as { text: string }).text));
}

describe("last used of API keys", () => {
  let h: Harness;
  let pool: Pool;

  beforeAll(async () => {
    h = await openHarness();
    pool = await pgPool(h.orm);
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await h?.close();
  });

  async function lastUsed(keyId: string): Promise<Date | null> {
    const r = await h.db.query<{ last_used_at: Date | null }>(`select last_used_at from api_key where id = $1`, [keyId]);
    return r.rows[0]?.last_used_at ?? null;
  }

  it("is written in one batched UPDATE on flush, never per request", async () => {
    const company = await h.accounts.companies.create({ name: "Usage Inc" });
    const one = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "one", scopes: ["mail.events.read"] }));
    const two = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "two", scopes: ["mail.events.read"] }));
    const spy = vi.spyOn(pool, "query");

    for (let i = 0; i < 10; i++) {
      await h.accounts.authenticator.authenticate(one.secret);
      await h.accounts.authenticator.authenticate(two.secret);
      h.clock.advanceHours(0.01);
    }
    const requestTime = new Date(h.clock.now().getTime() - 0.01 * 3_600_000);

    expect(statements(spy).filter((s) => /^\s*(update|insert|delete)/i.test(s))).toEqual([]);
    // At most one lookup per request (fewer: lookups are cached), nothing else.
    expect(statements(spy).length).toBeLessThanOrEqual(20);
    expect(statements(spy).every((s) => /^\s*select/i.test(s))).toBe(true);
    expect(await lastUsed(one.key.id)).toBeNull();
    expect(h.accounts.usage.pendingCount).toBe(2);

    spy.mockClear();
    await h.accounts.usage.flush();
    const written = statements(spy);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^\s*update api_key/i);
    expect(h.accounts.usage.pendingCount).toBe(0);
    expect(await lastUsed(one.key.id)).toEqual(requestTime);
    expect(await lastUsed(two.key.id)).toEqual(requestTime);

    const listed = (await h.accounts.keys.list({ companyId: company.id })).items;
    expect(listed.map((k) => k.lastUsedAt)).toEqual([requestTime, requestTime]);

    // Nothing pending: a flush does not even reach the database.
    spy.mockClear();
    await h.accounts.usage.flush();
    expect(statements(spy)).toEqual([]);
    spy.mockRestore();
  });

  it("never moves last_used_at back (processes flushing out of order)", async () => {
    const company = await h.accounts.companies.create({ name: "Order Inc" });
    const { key } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));
    const later = new Date("2031-01-01T00:00:00.000Z");
    const earlier = new Date("2030-06-01T00:00:00.000Z");
    h.accounts.usage.record(key.id, later);
    await h.accounts.usage.flush();
    h.accounts.usage.record(key.id, earlier);
    await h.accounts.usage.flush();
    expect(await lastUsed(key.id)).toEqual(later);
  });

  it("keeps the times of a failed flush for the next one", async () => {
    const company = await h.accounts.companies.create({ name: "Retry Inc" });
    const { key } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));
    const at = new Date("2032-01-01T00:00:00.000Z");
    h.accounts.usage.record(key.id, at);
    const spy = vi.spyOn(pool, "query").mockRejectedValueOnce(new Error("connection lost"));
    await expect(h.accounts.usage.flush()).rejects.toThrow("connection lost");
    expect(h.accounts.usage.pendingCount).toBe(1);
    spy.mockRestore();
    await h.accounts.usage.flush();
    expect(await lastUsed(key.id)).toEqual(at);
  });

  it("flushes on a timer, and on close", async () => {
    const company = await h.accounts.companies.create({ name: "Timer Inc" });
    const { key } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));

    const store = new PostgresKeyUsageStore(async () => pool);
    const timed = new KeyUsageBatcher(store, { flushMs: 20 });
    timed.record(key.id, new Date("2033-01-01T00:00:00.000Z"));
    await vi.waitFor(async () => expect(await lastUsed(key.id)).toEqual(new Date("2033-01-01T00:00:00.000Z")));
    await timed.close();

    const manual = new KeyUsageBatcher(store, { flushMs: 3_600_000 });
    manual.record(key.id, new Date("2034-01-01T00:00:00.000Z"));
    await manual.close();
    expect(await lastUsed(key.id)).toEqual(new Date("2034-01-01T00:00:00.000Z"));
    // Closed: later records are dropped.
    manual.record(key.id, new Date("2035-01-01T00:00:00.000Z"));
    expect(manual.pendingCount).toBe(0);
  });
});
