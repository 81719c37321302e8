import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PostgresRateLimitWindows } from "../../../../src/adapters/postgres/rate-limit/postgres-rate-limit-windows.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { FixedWindowRateLimiter } from "../../../../src/capabilities/rate-limit/index.ts";
import { migrate, openOrm, type MikroORM } from "../../../../src/adapters/postgres/orm.ts";
import { createTestDatabase, type TestDatabase } from "../../../support/test-database.ts";

/** The rate limiter's rules on the PostgreSQL windows, as each API process builds them. */
describe("FixedWindowRateLimiter on PostgresRateLimitWindows", () => {
  let db: TestDatabase;
  // Two "API processes": each its own ORM, pool and limiter, one database.
  let ormA: MikroORM;
  let ormB: MikroORM;
  let windowsA: PostgresRateLimitWindows;
  let limiterA: FixedWindowRateLimiter;
  let limiterB: FixedWindowRateLimiter;
  let bucketSeq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    ormA = await openOrm(db.url, { poolMax: 5 });
    ormB = await openOrm(db.url, { poolMax: 5 });
    await migrate(ormA);
    windowsA = new PostgresRateLimitWindows(poolOf(ormA));
    limiterA = new FixedWindowRateLimiter(windowsA);
    limiterB = new FixedWindowRateLimiter(new PostgresRateLimitWindows(poolOf(ormB)));
  });

  afterAll(async () => {
    await limiterA?.close();
    await limiterB?.close();
    await ormA?.close();
    await ormB?.close();
    await db?.drop();
  });

  /** Each test counts in a window of its own: never a few seconds before the minute turns. */
  beforeEach(async () => {
    const r = await db.query<{ left_ms: number }>(
      `select extract(epoch from (date_trunc('minute', now()) + interval '1 minute' - now())) * 1000 as left_ms`,
    );
    const left = Number(r.rows[0]?.left_ms);
    if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
  });

  function bucket(): string {
    return `key-${++bucketSeq}:default`;
  }

  it("shares one count between processes: 3 via A + 3 via B, the 6th is refused", async () => {
    const b = bucket();
    const decisions = [];
    for (const limiter of [limiterA, limiterB]) {
      for (let i = 0; i < 3; i++) decisions.push(await limiter.consume({ bucket: b, limitPerMinute: 5 }));
    }
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    for (const d of decisions) {
      expect(d.limit).toBe(5);
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(d.resetSeconds).toBeLessThanOrEqual(60);
    }
    const refused = decisions[5];
    expect(refused?.retryAfterSeconds).toBe(refused?.resetSeconds);
    expect(decisions.slice(0, 5).every((d) => d.retryAfterSeconds === 0)).toBe(true);

    // The reset matches the end of the database's current minute.
    const r = await db.query<{ left: number }>(
      `select ceil(extract(epoch from (date_trunc('minute', now()) + interval '1 minute' - now())))::int as left`,
    );
    expect(Math.abs((refused?.resetSeconds ?? 0) - Number(r.rows[0]?.left))).toBeLessThanOrEqual(1);
  });

  it("keeps buckets apart", async () => {
    const first = bucket();
    const second = bucket();
    await limiterA.consume({ bucket: first, limitPerMinute: 1 });
    expect((await limiterA.consume({ bucket: first, limitPerMinute: 1 })).allowed).toBe(false);
    expect((await limiterB.consume({ bucket: second, limitPerMinute: 1 })).allowed).toBe(true);
  });

  it("holds the limit exactly under concurrent requests from both processes", async () => {
    const b = bucket();
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? limiterA : limiterB).consume({ bucket: b, limitPerMinute: 15 })),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(15);
    expect(decisions.filter((d) => !d.allowed)).toHaveLength(25);
  });

  it("starts a new budget in a new window", async () => {
    const b = bucket();
    for (let i = 0; i < 3; i++) await limiterA.consume({ bucket: b, limitPerMinute: 3 });
    expect((await limiterB.consume({ bucket: b, limitPerMinute: 3 })).allowed).toBe(false);

    // Let the minute pass: move this bucket's window into the past.
    await db.query(`update rate_limit set window_start = window_start - interval '1 minute' where bucket = $1`, [b]);

    const fresh = await limiterB.consume({ bucket: b, limitPerMinute: 3 });
    expect(fresh).toMatchObject({ allowed: true, limit: 3, remaining: 2, retryAfterSeconds: 0 });
  });

  it("cleans up windows older than two minutes", async () => {
    const old = bucket();
    const current = bucket();
    await limiterA.consume({ bucket: old, limitPerMinute: 10 });
    await limiterA.consume({ bucket: current, limitPerMinute: 10 });
    await db.query(`update rate_limit set window_start = window_start - interval '3 minutes' where bucket = $1`, [old]);

    const deleted = await windowsA.cleanup();
    expect(deleted).toBeGreaterThanOrEqual(1);
    const rows = await db.query<{ bucket: string }>(`select bucket from rate_limit where bucket = any($1)`, [[old, current]]);
    expect(rows.rows.map((r) => r.bucket)).toEqual([current]);
  });

  it("refuses nonsense limits", async () => {
    await expect(limiterA.consume({ bucket: bucket(), limitPerMinute: 0 })).rejects.toThrow();
    await expect(limiterA.consume({ bucket: "", limitPerMinute: 10 })).rejects.toThrow();
  });
});
