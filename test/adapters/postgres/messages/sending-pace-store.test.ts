import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresSendingPaceStore } from "../../../../src/adapters/postgres/messages/sending-pace-store.ts";
import { migrate, type MikroORM, openOrm } from "../../../../src/adapters/postgres/orm.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { SendingPace } from "../../../../src/capabilities/messages/lifecycle/sending-pace.ts";
import { createTestDatabase, type TestDatabase } from "../../../support/test-database.ts";

describe("the sending pace's token bucket in PostgreSQL", () => {
  let db: TestDatabase;
  let orm: MikroORM;

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await openOrm(db.url, { poolMax: 20 });
    await migrate(orm);
  });

  afterAll(async () => {
    await orm?.close();
    await db?.drop();
  });

  it("a new bucket starts full: `burst` slots at once, then a wait of about one token's time", async () => {
    const pace = new SendingPace({ store: postgresSendingPaceStore(poolOf(orm)), ratePerSecond: 0.5, burst: 3 });
    expect([await pace.reserve({ provider: "fresh" }), await pace.reserve({ provider: "fresh" }), await pace.reserve({ provider: "fresh" })]).toEqual([0, 0, 0]);
    const wait = await pace.reserve({ provider: "fresh" });
    // One token every 2 s.
    expect(wait).toBeGreaterThan(1_500);
    expect(wait).toBeLessThanOrEqual(2_000);
  });

  it("40 concurrent reservations on a bucket of 5 take exactly 5 slots (one atomic statement each)", async () => {
    const pace = new SendingPace({ store: postgresSendingPaceStore(poolOf(orm)), ratePerSecond: 0.001, burst: 5 });
    const waits = await Promise.all(Array.from({ length: 40 }, () => pace.reserve({ provider: "crowded" })));
    expect(waits.filter((w) => w === 0)).toHaveLength(5);
    const { rows } = await db.query<{ tokens: number }>(`select tokens from sending_pace where provider = 'crowded'`);
    expect(Number(rows[0]?.tokens)).toBeLessThan(1);
    expect(Number(rows[0]?.tokens)).toBeGreaterThanOrEqual(0);
  });

  it("campaign copies take the pace at a lower priority: they leave half the burst to transactional mail", async () => {
    const pace = new SendingPace({ store: postgresSendingPaceStore(poolOf(orm)), ratePerSecond: 0.001, burst: 4 });
    const a = "00000000-0000-4000-8000-0000000000c1";
    // A full bucket of 4: campaign copies take two, then wait (the two left are kept).
    expect([await pace.reserve({ provider: "priority", priority: "campaign" }), await pace.reserve({ provider: "priority", priority: "campaign" })]).toEqual([0, 0]);
    expect(await pace.reserve({ provider: "priority", priority: "campaign" })).toBeGreaterThan(0);
    // Transactional mail still finds the two kept tokens at once.
    expect([await pace.reserve({ provider: "priority", companyId: a }), await pace.reserve({ provider: "priority", companyId: a })]).toEqual([0, 0]);
    expect(await pace.reserve({ provider: "priority", companyId: a })).toBeGreaterThan(0);
  });

  it("buckets of different providers are independent", async () => {
    const pace = new SendingPace({ store: postgresSendingPaceStore(poolOf(orm)), ratePerSecond: 0.001, burst: 1 });
    expect(await pace.reserve({ provider: "a" })).toBe(0);
    expect(await pace.reserve({ provider: "b" })).toBe(0);
    expect(await pace.reserve({ provider: "a" })).toBeGreaterThan(0);
  });

  it("is fair between companies: a company waiting behind another's burst gets the next token", async () => {
    // One token a second, no burst: A keeps asking (a burst of its messages), B asks once.
    const pace = new SendingPace({ store: postgresSendingPaceStore(poolOf(orm)), ratePerSecond: 1, burst: 1 });
    const a = "00000000-0000-4000-8000-00000000000a";
    const b = "00000000-0000-4000-8000-00000000000b";
    expect(await pace.reserve({ provider: "fair", companyId: a })).toBe(0);
    const bWait = await pace.reserve({ provider: "fair", companyId: b });
    expect(bWait).toBeGreaterThan(0);
    // A asks again and again while B waits: B is owed the next token, so A is told to wait longer than B.
    const aWait = await pace.reserve({ provider: "fair", companyId: a });
    expect(aWait).toBeGreaterThan(bWait);
    await new Promise((resolve) => setTimeout(resolve, bWait + 20));
    // A, asking first once the token is there, is refused it; B takes it.
    expect(await pace.reserve({ provider: "fair", companyId: a })).toBeGreaterThan(0);
    expect(await pace.reserve({ provider: "fair", companyId: b })).toBe(0);
  });
});
