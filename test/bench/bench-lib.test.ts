import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainStatement } from "../../bench/lib/explain.ts";
import { startCensusProxy, transactions } from "../../bench/lib/pg-census-proxy.ts";
import { Figures, formatTable } from "../../bench/lib/report.ts";
import { benchSettings } from "../../bench/lib/settings.ts";
import {
  BALANCE,
  CONSUME_RATE,
  DEFAULT_SENDER,
  EVENTS,
  INSERT_MESSAGE,
  kindOf,
  LOOKUP_KEY,
  MESSAGE,
  PAGE,
} from "../../bench/baselines/bare-statements.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";

/**
 * The parts of `npm run bench` whose mistakes would go unnoticed in its
 * output (the run itself takes minutes and is not a test): the statement
 * census must see exactly what a process sends, a bad plan must be
 * flagged, and each ratio must compare a run with its own baseline.
 */
describe("benchmark tooling", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.query(`create table item (id int primary key, kind text not null)`);
    await database.query(`insert into item select g, case when g % 1000 = 0 then 'rare' else 'common' end from generate_series(1, 50000) g`);
    await database.query(`analyze item`);
  });

  afterAll(async () => {
    await database.drop();
  });

  it("the census proxy records every statement a client runs, in both protocols, and passes the answers through", async () => {
    const proxy = await startCensusProxy(database.url);
    const client = new pg.Client({ connectionString: proxy.url });
    try {
      await client.connect();
      await client.query("begin");
      const simple = await client.query("select count(*)::int as n from item");
      const bound = await client.query("select kind from item where id = $1", [1000]);
      // A named statement is parsed once and executed twice: two statements.
      const named = { name: "by_kind", text: "select count(*)::int as n from item where kind = $1" };
      const rare = await client.query({ ...named, values: ["rare"] });
      const common = await client.query({ ...named, values: ["common"] });
      await client.query("commit");

      expect(simple.rows[0]).toEqual({ n: 50000 });
      expect(bound.rows[0]).toEqual({ kind: "rare" });
      expect(rare.rows[0]).toEqual({ n: 50 });
      expect(common.rows[0]).toEqual({ n: 49950 });
      expect(proxy.statements.map((statement) => statement.text)).toEqual([
        "begin",
        "select count(*)::int as n from item",
        "select kind from item where id = $1",
        named.text,
        named.text,
        "commit",
      ]);
      // One transaction, then a statement on a second connection: a transaction of its own.
      const other = new pg.Client({ connectionString: proxy.url });
      await other.connect();
      await other.query("select 1");
      await other.end();
      expect(transactions(proxy.statements).map((transaction) => transaction.length)).toEqual([6, 1]);
    } finally {
      await client.end();
      await proxy.close();
    }
  });

  it("flags a plan that reads the whole table for a few rows, and not one that uses an index", async () => {
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    // pool.end() answers before its connection has closed; the database's drop may then terminate it, which is no failure of this test.
    pool.on("connect", (client) => client.on("error", () => {}));
    try {
      const byKind = await explainStatement(pool, { text: "select id from item where kind = $1 order by id limit 10", values: ["nothing-has-this"] }, 10_000);
      expect(byKind.warnings.join("\n")).toMatch(/Seq Scan on item discards \d{5} rows by filter/);
      const byId = await explainStatement(pool, { text: "select kind from item where id = $1", values: [42] }, 10_000);
      expect(byId.warnings).toEqual([]);
      expect(byId.plan.join("\n")).toMatch(/Index Scan using item_pkey/);
      expect(byId.executionMs).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
  });

  it("compares each run with the baseline of the same run and checks the targets on the medians", () => {
    const figures = new Figures();
    const send = { label: "POST /send", unit: "req/s", better: "higher", baselineLabel: "bare", target: { ratio: 0.6 } } as const;
    figures.add("send", send, 100, 200);
    figures.add("send", send, 150, 200);
    figures.add("send", send, 90, 100);
    const p99 = { label: "POST /send p99", unit: "ms", better: "lower", baselineLabel: "bare", target: { ratio: 1.5 } } as const;
    figures.add("p99", p99, 30, 20);
    const rss = { label: "API RSS", unit: "MiB", better: "lower", baselineLabel: "bare process", target: { atMost: 250 } } as const;
    figures.add("rss", rss, 300, 100);

    const [sendReport, p99Report, rssReport] = figures.reports();
    expect(sendReport?.ratio.runs).toEqual([0.5, 0.75, 0.9]);
    expect(sendReport?.ratio.median).toBe(0.75);
    expect(sendReport?.service).toMatchObject({ min: 90, median: 100, max: 150 });
    expect(sendReport?.met).toBe(true);
    expect(p99Report?.met).toBe(true);
    expect(rssReport?.met).toBe(false);

    const table = formatTable(figures.reports());
    expect(table).toContain("0.75x [0.50-0.90]");
    expect(table).toMatch(/API RSS \(MiB\)\s+300\s+100\s+3\.00x\s+<= 250 MiB MISSED/);
  });

  it("recognises each statement of the bare baseline as its own kind, and nothing else as one", () => {
    const texts: [string, string][] = [
      ["key", LOOKUP_KEY.text],
      ["rate", CONSUME_RATE.text],
      ["sender", DEFAULT_SENDER],
      ["balance", BALANCE],
      ["insert", INSERT_MESSAGE],
      ["message", MESSAGE],
      ["page", PAGE],
      ["events", EVENTS],
    ];
    expect(texts.map(([, text]) => kindOf(text))).toEqual(texts.map(([kind]) => kind));
    // The ORM's quoting of the sender lookup, as the service sends it.
    expect(kindOf(`select "s0".*, "d1"."id" as "d1__id" from "sender" as "s0" inner join "sending_domain" as "d1" on "s0"."domain_id" = "d1"."id" where "s0"."company_id" = 'x' and "s0"."is_default" = true limit 1`)).toBe("sender");
    expect(kindOf("update message set workflow_started_at = now() where id = $1")).toBeUndefined();
  });

  it("BENCH_QUICK makes every default a smoke run's, and an explicit setting still wins", () => {
    const quick = benchSettings({ BENCH_QUICK: "1", BENCH_MESSAGES: "50" });
    expect(quick).toMatchObject({ runs: 1, sendSeconds: 1, messages: 50 });
    expect(benchSettings({}).runs).toBe(3);
    expect(() => benchSettings({ BENCH_ONLY: "send,nope" })).toThrow(/unknown nope/);
  });
});
