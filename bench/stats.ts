/**
 * `npm run bench:stats`: the sending statistics (docs/statistics.md), in two parts.
 *
 * 1. The read. Seeds the hourly aggregates of MESSAGES messages (default
 *    1,000,000) of one company over the last 180 days, and of two other
 *    companies (a tenth as many each), exactly as the send path would have
 *    counted them (grouped by PostgreSQL from generated messages: outcomes,
 *    tags and templates below), and in the order it writes them: hour after
 *    hour, every company's rows of an hour side by side. Then reads, READS times each (default 200; the leaders 30),
 *    through the use case (MailStatistics over PostgresStatsStore: the
 *    statement, the rows' mapping, the empty buckets filled, the rates) and
 *    as the bare statement on a plain pg client, both on the same aggregate:
 *    90 days by day (the overview), by day for a tag and a template, 31 days
 *    by hour, and the leaders over 90 days. Prints p50 and p99 of each;
 *    the target is the use case's 90-day daily read under 50 ms.
 *
 * 2. The cost to a send. The database writes of one delivered message (the
 *    acceptance, the move to `processing`, the moves to `sent` and
 *    `delivered` with their events and webhook events) by CONNECTIONS
 *    concurrent loops (default 8) for SECONDS (default 8), with the
 *    statements as the service runs them (recording the outcomes, with the
 *    fold beside them a pass a second, as the API process runs it, and the
 *    last pass after the loops counted in the time) and the same statements
 *    without the counting (message-store.ts's MESSAGE_STATEMENTS),
 *    alternately, RUNS times (default 3). The ratio is
 *    per run pair. Only the database work is compared, so the ratio is a
 *    bound: a whole send (HTTP, auth, validation, Temporal) costs more,
 *    and the counting the same, so a whole send loses less.
 *
 * 3. The cost to a whole send. The service as deployed (an API process and
 *    a worker process, the simulator as the email service, a Temporal dev
 *    server) takes E2E_MESSAGES sends (default 1,000; 32 at a time) until
 *    every one is `delivered`, with the counting and without it,
 *    alternately, E2E_RUNS times (default 5: a whole send varies more). Without: a trigger skips every row the send
 *    path writes for the statistics (one PL/pgSQL call instead of the
 *    insert); with: the trigger is disabled, and the API process's fold
 *    counts them. Messages delivered per second, and the same-run ratio.
 *
 * A scratch database on the local PostgreSQL (BENCH_DATABASE_ADMIN_URL),
 * dropped after. Results: bench/results/stats.json (not committed);
 * docs/benchmarks.md keeps the figures.
 *
 * Seeded outcomes, by (i * 7919) % 10000: 97 % handed over (sent), of all
 * messages 91 % delivered, 3 % bounced (2.9 % after no delivery), 0.05 %
 * complained (after a delivery), 1 % rejected, 1.5 % failed, 0.5 %
 * suppressed; 2 % deferred once. Tags: `campaign` on 30 %, `order` on 20 %,
 * `tag-0`..`tag-9` on 5 % each; a template (one of 8) on 40 %.
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { migrate, openOrm } from "../src/adapters/postgres/orm.ts";
import { insertQueuedValues, MESSAGE_STATEMENTS, moveValues } from "../src/adapters/postgres/messages/message-store.ts";
import { PostgresStatsStore, STATS_SERIES_SQL } from "../src/adapters/postgres/stats/postgres-stats-store.ts";
import { MESSAGE_DIMENSIONS, PostgresStatsFold } from "../src/adapters/postgres/stats/stats-fold.ts";
import { MailStatistics } from "../src/capabilities/stats/index.ts";
import type { Move } from "../src/capabilities/messages/ports.ts";
import { createScratchDatabase, type ScratchDatabase } from "./lib/database.ts";
import { endToEnd } from "./phases/flow.ts";
import { setupCompany, startDeployedService } from "./lib/service.ts";
import { median, percentile } from "./lib/stats.ts";

const RESULTS = path.join(import.meta.dirname, "results", "stats.json");
const SPAN_DAYS = 180;
const DAY_MS = 86_400_000;
const TARGET_MS = 50;
const MAX_SEND_LOSS = 0.05;
/** The API process's fold interval (src/wiring/stats.ts). */
const FOLD_INTERVAL_MS = 1_000;

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/**
 * The aggregates of generated messages of several companies ($1, $2: their
 * ids and message counts), as the send path counts them, written hour by
 * hour as the send path writes them (all companies' rows of an hour side by side).
 */
const SEED = `
  insert into message_stats_hour (company_id, dimension, dimension_value, hour, shard,
                                  accepted, sent, delivered, bounced, complained, rejected, failed, suppressed, deferred)
  select m.company_id, d.dimension, d.value, date_bin('1 hour', m.at, timestamptz '2000-01-01 00:00:00+00') as hour, (hashtext(m.i::text) & 7)::smallint,
         count(*), count(*) filter (where m.b < 9700), count(*) filter (where m.b < 9100 or m.b between 9690 and 9694),
         count(*) filter (where m.b between 9100 and 9399 or m.b = 9695), count(*) filter (where m.b between 9690 and 9694),
         count(*) filter (where m.b between 9700 and 9799), count(*) filter (where m.b between 9800 and 9949),
         count(*) filter (where m.b >= 9950), count(*) filter (where m.i % 50 = 0)
    from (
      select c.company_id, g.i, (g.i * 7919) % 10000 as b,
             now() - (g.i::double precision * $3::double precision / c.n::double precision) * interval '1 second' as at,
             case when g.i % 10 < 3 then '{"campaign": "spring"}'::jsonb
                  when g.i % 10 < 5 then jsonb_build_object('order', g.i::text)
                  else '{}'::jsonb end
             || case when g.i % 20 < 10 then jsonb_build_object('tag-' || (g.i % 20), 'x') else '{}'::jsonb end as tags,
             case when g.i % 5 < 2 then ('00000000-0000-4000-8000-00000000000' || (g.i % 8))::uuid end as template_id
        from unnest($1::uuid[], $2::bigint[]) as c(company_id, n)
        cross join lateral generate_series(1, c.n) as g(i)
    ) m
    ${MESSAGE_DIMENSIONS}
   group by 1, 2, 3, 4, 5
   order by 4, 1, 2, 3, 5`;

interface Timing {
  readonly p50: number;
  readonly p99: number;
}

async function timed(times: number, run: () => Promise<unknown>): Promise<Timing> {
  for (let n = 0; n < Math.min(20, times); n++) await run();
  const samples: number[] = [];
  for (let n = 0; n < times; n++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const ms = (value: number): string => `${value.toFixed(2)} ms`;

/** The companies (name, messages) and their aggregates, in one statement; answers their ids. */
async function seedCompanies(pool: pg.Pool, companies: readonly (readonly [string, number])[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [name] of companies) {
    const { rows } = await pool.query<{ id: string }>(`insert into company (name) values ($1) returning id`, [name]);
    ids.push(rows[0]?.id ?? "");
  }
  const started = performance.now();
  const seeded = await pool.query(SEED, [ids, companies.map(([, count]) => count), SPAN_DAYS * 86_400]);
  console.log(`  ${companies.map(([name, count]) => `${name} ${count}`).join(", ")} messages: ${seeded.rowCount} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return ids;
}

async function readPart(pool: pg.Pool, url: string, messages: number, reads: number): Promise<Record<string, unknown>> {
  console.log(`\n--- the read: aggregates of ${messages} messages over ${SPAN_DAYS} days`);
  const other = Math.max(1, Math.floor(messages / 10));
  const [companyId = ""] = await seedCompanies(pool, [
    ["bench-main", messages],
    ["bench-other-1", other],
    ["bench-other-2", other],
  ]);
  await pool.query("vacuum (analyze) message_stats_hour");
  const { rows: size } = await pool.query<{ rows: string; size: string }>(
    `select (select count(*) from message_stats_hour) as rows, pg_size_pretty(pg_total_relation_size('message_stats_hour')) as size`,
  );
  console.log(`  message_stats_hour: ${size[0]?.rows} rows, ${size[0]?.size} with its index`);

  const statistics = new MailStatistics({ store: new PostgresStatsStore(() => Promise.resolve(pool)) });
  const bare = new pg.Client({ connectionString: url });
  await bare.connect();
  const now = new Date();
  const since90 = new Date(now.getTime() - 90 * DAY_MS);
  const day = (t: Date): Date => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
  const check = await statistics.series({ companyId, since: since90, interval: "day" });
  console.log(`  90 days by day: ${check.buckets.length} buckets, ${check.totals.accepted} accepted, bounce rate ${((check.totals.bounceRate ?? 0) * 100).toFixed(2)} %`);

  const scenarios: { name: string; useCase: () => Promise<unknown>; sql?: { values: unknown[] }; times?: number }[] = [
    {
      name: "90 days by day",
      useCase: () => statistics.series({ companyId, since: since90, interval: "day" }),
      sql: { values: [companyId, 0, "", day(since90), new Date(day(now).getTime() + DAY_MS), 24] },
    },
    {
      name: "90 days by day, tag=campaign (30 %)",
      useCase: () => statistics.series({ companyId, since: since90, interval: "day", tag: "campaign" }),
      sql: { values: [companyId, 1, "campaign", day(since90), new Date(day(now).getTime() + DAY_MS), 24] },
    },
    {
      name: "90 days by day, one template (5 %)",
      useCase: () => statistics.series({ companyId, since: since90, interval: "day", templateId: "00000000-0000-4000-8000-000000000003" }),
    },
    { name: "31 days by hour", useCase: () => statistics.series({ companyId, since: new Date(now.getTime() - 31 * DAY_MS + 3_600_000), interval: "hour" }) },
    // Every tag and template row of the range, summed: once per overview, not per chart; fewer reads.
    { name: "leaders over 90 days (tags and templates)", useCase: () => statistics.leaders({ companyId, since: since90, minSent: 100 }), times: Math.min(reads, 30) },
  ];
  const results: Record<string, unknown> = {};
  for (const scenario of scenarios) {
    const useCase = await timed(scenario.times ?? reads, scenario.useCase);
    const values = scenario.sql?.values;
    const sql = values ? await timed(reads, () => bare.query(STATS_SERIES_SQL, values)) : undefined;
    results[scenario.name] = { useCase, ...(sql ? { sql } : {}) };
    console.log(
      `  ${scenario.name.padEnd(44)} use case p50 ${ms(useCase.p50)}, p99 ${ms(useCase.p99)}` +
        (sql ? `   bare SQL p50 ${ms(sql.p50)}, p99 ${ms(sql.p99)}` : ""),
    );
  }
  // What the 90-day read touches, whatever the machine's load: PostgreSQL's own account of rows, buffers and time.
  const plan = await bare.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers, timing off) ${STATS_SERIES_SQL}`, scenarios[0]?.sql?.values ?? []);
  const planLines = plan.rows.map((row) => row["QUERY PLAN"]);
  console.log(`  90 days by day, its plan:\n${planLines.map((line) => `    ${line}`).join("\n")}`);
  results.plan = planLines;
  const main = results["90 days by day"] as { useCase: Timing };
  console.log(`  target: 90 days by day under ${TARGET_MS} ms: ${main.useCase.p99 < TARGET_MS ? "met" : "!!! NOT met"} (p99 ${ms(main.useCase.p99)})`);
  await bare.end();
  return { messages, rows: Number(size[0]?.rows), size: size[0]?.size, reads, scenarios: results };
}

interface Statements {
  readonly insert: string;
  readonly move: string;
}

/**
 * The database writes of `CONNECTIONS` loops of delivered messages for
 * `seconds`; answers messages per second. With `fold`, the fold runs beside
 * them as the API process runs it (a pass a second, on its own connection),
 * and the pass that empties what is left after the loops counts in the time.
 */
async function sendLoad(
  pool: pg.Pool,
  companyId: string,
  senderId: string,
  statements: Statements,
  connections: number,
  seconds: number,
  fold?: PostgresStatsFold,
): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  const folding = async (): Promise<void> => {
    if (!fold) return;
    while (performance.now() < deadline) {
      await fold.fold();
      await new Promise((resolve) => setTimeout(resolve, Math.min(FOLD_INTERVAL_MS, Math.max(0, deadline - performance.now()))));
    }
  };
  let done = 0;
  const move = async (client: pg.PoolClient, id: string, to: Move["to"], eventType: string, webhook: string): Promise<void> => {
    await client.query({ text: statements.move, values: moveValues(companyId, id, { to, at: new Date(), eventType, webhooks: [{ event: webhook, data: { id } }] }, null) });
  };
  const loop = async (): Promise<void> => {
    const client = await pool.connect();
    try {
      while (performance.now() < deadline) {
        const id = randomUUID();
        const message = {
          id,
          companyId,
          apiKeyId: null,
          idempotencyKey: null,
          recipient: `user-${id.slice(0, 8)}@customer.example`,
          recipientName: null,
          senderId,
          fromEmail: "noreply@bench.example",
          fromName: null,
          replyTo: null,
          subject: "Your receipt",
          html: "<p>Thanks for your order.</p>",
          text: null,
          templateId: null,
          tags: { order: id.slice(0, 8) },
        };
        await client.query({ text: statements.insert, values: insertQueuedValues(message, message.html, message.text) });
        // The handoff's claim: the same statement whichever variant runs.
        await client.query(`update message set status = 'processing' where company_id = $1 and id = $2`, [companyId, id]);
        await move(client, id, "sent", "sent", "sent");
        await move(client, id, "delivered", "delivery", "delivered");
        done++;
      }
    } finally {
      client.release();
    }
  };
  const started = performance.now();
  await Promise.all([folding(), ...Array.from({ length: connections }, loop)]);
  await fold?.fold();
  return done / ((performance.now() - started) / 1000);
}

async function sendPart(pool: pg.Pool, connections: number, seconds: number, runs: number): Promise<Record<string, unknown>> {
  console.log(`\n--- the cost to a send: a delivered message's database writes, ${connections} connections, ${seconds} s per run, ${runs} run(s) each`);
  const { rows: company } = await pool.query<{ id: string }>(`insert into company (name) values ('bench-sender') returning id`);
  const companyId = company[0]?.id ?? "";
  const { rows: domain } = await pool.query<{ id: string }>(
    `insert into sending_domain (company_id, domain, return_path_domain, dkim_selector, dkim_public_key, dkim_private_key_sealed)
     values ($1, 'bench.example', 'bounces.bench.example', 'bench', 'x', 'x') returning id`,
    [companyId],
  );
  const { rows: sender } = await pool.query<{ id: string }>(
    `insert into sender (company_id, domain_id, email) values ($1, $2, 'noreply@bench.example') returning id`,
    [companyId, domain[0]?.id],
  );
  const senderId = sender[0]?.id ?? "";
  const counted: number[] = [];
  const uncounted: number[] = [];
  const ratios: number[] = [];
  // A warm-up of each, then alternate, the order switching every run.
  const fold = new PostgresStatsFold(() => Promise.resolve(pool));
  await sendLoad(pool, companyId, senderId, MESSAGE_STATEMENTS.counted, connections, 2, fold);
  await sendLoad(pool, companyId, senderId, MESSAGE_STATEMENTS.uncounted, connections, 2);
  for (let run = 0; run < runs; run++) {
    const pair: [number, number] = [0, 0];
    for (const variant of run % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      pair[variant] =
        variant === 0
          ? await sendLoad(pool, companyId, senderId, MESSAGE_STATEMENTS.counted, connections, seconds, fold)
          : await sendLoad(pool, companyId, senderId, MESSAGE_STATEMENTS.uncounted, connections, seconds);
    }
    counted.push(pair[0]);
    uncounted.push(pair[1]);
    ratios.push(pair[0] / pair[1]);
    console.log(`  run ${run + 1}: with the counting ${pair[0].toFixed(0)}/s, without ${pair[1].toFixed(0)}/s, ratio ${(pair[0] / pair[1]).toFixed(3)}`);
  }
  const ratio = median(ratios);
  console.log(
    `  median: with ${median(counted).toFixed(0)}/s, without ${median(uncounted).toFixed(0)}/s, ratio ${ratio.toFixed(3)} [${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}]` +
      ` (${((1 - ratio) * 100).toFixed(1)} % fewer; bound ${MAX_SEND_LOSS * 100} %: ${1 - ratio <= MAX_SEND_LOSS ? "met" : "!!! NOT met"})`,
  );
  return { connections, seconds, runs, counted, uncounted, ratios, ratio };
}

/** Skips the statistics' rows of the send path while enabled (the "without" of part 3). */
const SKIP_COUNTING = `
  create function bench_skip_counting() returns trigger language plpgsql as $$ begin return null; end $$;
  create trigger bench_skip_counting before insert on message_stats_pending for each row execute function bench_skip_counting();
  alter table message_stats_pending disable trigger bench_skip_counting`;

async function wholeSendPart(url: string, messages: number, runs: number): Promise<Record<string, unknown>> {
  console.log(`\n--- the cost to a whole send: ${messages} sends per batch (32 at a time) until delivered, the service as deployed, ${runs} run(s) each`);
  const cleanup: Array<() => Promise<unknown>> = [];
  try {
    const { api, stop } = await startDeployedService(url, "stats", false);
    cleanup.unshift(stop);
    const company = await setupCompany(api.operatorUrl, (runs * 2 + 1) * messages + 100);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    cleanup.unshift(() => db.end());
    await db.query(SKIP_COUNTING);
    const counting = (on: boolean): Promise<unknown> => db.query(`alter table message_stats_pending ${on ? "disable" : "enable"} trigger bench_skip_counting`);

    await endToEnd(db, api.httpUrl, company, Math.min(messages, 100), 32);
    const counted: number[] = [];
    const uncounted: number[] = [];
    const ratios: number[] = [];
    for (let run = 0; run < runs; run++) {
      const pair: [number, number] = [0, 0];
      for (const variant of run % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
        await counting(variant === 0);
        const { delivered } = await endToEnd(db, api.httpUrl, company, messages, 32);
        pair[variant] = messages / delivered;
      }
      counted.push(pair[0]);
      uncounted.push(pair[1]);
      ratios.push(pair[0] / pair[1]);
      console.log(`  run ${run + 1}: with the counting ${pair[0].toFixed(1)} delivered/s, without ${pair[1].toFixed(1)}/s, ratio ${(pair[0] / pair[1]).toFixed(3)}`);
    }
    await counting(true);
    // The last batch of the counting was folded: the statistics hold every counted batch.
    const reader = new pg.Pool({ connectionString: url, max: 1 });
    cleanup.unshift(() => reader.end());
    const statistics = new MailStatistics({ store: new PostgresStatsStore(() => Promise.resolve(reader)) });
    const check = await statistics.series({ companyId: company.companyId, since: new Date(Date.now() - DAY_MS), interval: "hour" });
    console.log(`  the statistics count ${check.totals.delivered} delivered (the counted batches and the warm-up: ${runs * messages + Math.min(messages, 100)})`);
    const ratio = median(ratios);
    console.log(
      `  median: with ${median(counted).toFixed(1)}/s, without ${median(uncounted).toFixed(1)}/s, ratio ${ratio.toFixed(3)} [${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}]` +
        ` (${((1 - ratio) * 100).toFixed(1)} % fewer; bound ${MAX_SEND_LOSS * 100} %: ${1 - ratio <= MAX_SEND_LOSS ? "met" : "!!! NOT met"})`,
    );
    return { messages, runs, counted, uncounted, ratios, ratio, statisticsDelivered: check.totals.delivered };
  } finally {
    for (const step of cleanup) await step().catch((error: unknown) => console.error(error));
  }
}

async function main(): Promise<void> {
  const messages = setting("MESSAGES", 1_000_000);
  const reads = setting("READS", 200);
  const connections = setting("CONNECTIONS", 8);
  const seconds = setting("SECONDS", 8);
  const runs = setting("RUNS", 3);
  const scratch: ScratchDatabase = await createScratchDatabase("mail_bench_stats");
  console.log(`scratch database ${scratch.name}; ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  try {
    const orm = await openOrm(scratch.url, { poolMax: 2 });
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
    // One more connection than the loops: the fold's.
    const pool = new pg.Pool({ connectionString: scratch.url, max: connections + 1 });
    try {
      const read = await readPart(pool, scratch.url, messages, reads);
      const send = await sendPart(pool, connections, seconds, runs);
      const wholeSend = await wholeSendPart(scratch.url, setting("E2E_MESSAGES", 1_000), setting("E2E_RUNS", 5));
      console.log(`load at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
      await mkdir(path.dirname(RESULTS), { recursive: true });
      await writeFile(RESULTS, `${JSON.stringify({ at: new Date().toISOString(), read, send, wholeSend }, null, 2)}\n`);
      console.log(`\nwrote ${path.relative(process.cwd(), RESULTS)}`);
    } finally {
      await pool.end();
    }
  } finally {
    await scratch.drop();
  }
}

await main();
