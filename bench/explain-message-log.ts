/**
 * Prints `EXPLAIN (ANALYZE, BUFFERS)` of the statements MessageLog.list
 * runs, for the company with the most messages (or COMPANY_ID), on a database
 * seeded by bench/seed-messages.ts:
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/mail_bench node bench/explain-message-log.ts
 *
 * The statements are not copied: the log runs against a pool that records
 * every statement it sends, and those are explained with the same bind
 * values. Each scenario also reports the log's own wall time (median of
 * a few warm runs).
 */
import { explainScenarios, recordingPool, type RecordedStatement, type Scenario } from "./lib/explain.ts";
import { pgPool } from "../src/adapters/postgres/sql.ts";
import { openOrm } from "../src/adapters/postgres/orm.ts";
import { postgresMessageContent } from "../src/adapters/postgres/messages/message-content.ts";
import { postgresMessageLog } from "../src/adapters/postgres/messages/message-log.ts";
import { type ListMessagesCommand, MESSAGE_LOG_CURSOR, MessageLog } from "../src/capabilities/messages/read/index.ts";
import { fingerprintedFilters, parseListOptions } from "../src/capabilities/messages/read/filters.ts";
import { createKeysetCursorCodec } from "../src/capabilities/shared/keyset-cursor.ts";
import { filterFingerprint } from "../src/capabilities/shared/paging.ts";

type ListOptions = Omit<ListMessagesCommand, "companyId">;

const SECRET = "bench-cursor-secret";
const RUNS = 5;

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("set DATABASE_URL to the seeded database");
  const orm = await openOrm(databaseUrl, { poolMax: 2 });
  try {
    const pool = await pgPool(orm);
    const recorded: RecordedStatement[] = [];
    const recording = () => Promise.resolve(recordingPool(pool, recorded));
    const log = new MessageLog({ store: postgresMessageLog(recording), contents: postgresMessageContent(recording), cursorSecret: SECRET });

    const companyId =
      process.env.COMPANY_ID ??
      (await pool.query<{ company_id: string }>(`select company_id from message group by 1 order by count(*) desc limit 1`)).rows[0]
        ?.company_id;
    if (!companyId) throw new Error("no messages: run bench/seed-messages.ts first");
    const { rows: counts } = await pool.query<{ n: string }>(`select count(*) as n from message where company_id = $1`, [companyId]);
    const total = Number(counts[0]?.n);
    console.log(`company ${companyId}: ${total} messages (${(await pool.query("select count(*) as n from message")).rows[0]?.n} in all)\n`);

    /**
     * A cursor halfway through a walk with these filters (status only),
     * encoded exactly as the log encodes the nextCursor of the page ending
     * there (walking there page by page would take thousands of calls).
     */
    async function middleCursor(options: ListOptions): Promise<string> {
      const { filters } = parseListOptions(options);
      const statusClause = filters.status ? "and status = $2" : "and $2::text is null";
      const { rows } = await pool.query<{ position_at: string; id: string }>(
        `with matching as (select created_at, id from message where company_id = $1 ${statusClause})
         select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at, id
           from matching order by created_at desc, id desc
         offset (select count(*) / 2 from matching) limit 1`,
        [companyId, filters.status ?? null],
      );
      const row = rows[0];
      if (!row) throw new Error(`no rows for ${JSON.stringify(options)}`);
      const fingerprint = filterFingerprint(fingerprintedFilters(filters));
      return createKeysetCursorCodec(SECRET, MESSAGE_LOG_CURSOR).encode(companyId as string, fingerprint, { createdAt: row.position_at, id: row.id });
    }

    const firstPage = await log.list({ companyId });
    const scenarios: [string, ListOptions][] = [
      ["first page (limit 25)", {}],
      ["page 2 via nextCursor", { cursor: firstPage.nextCursor ?? undefined }],
      ["deep page via cursor (halfway through the log)", { cursor: await middleCursor({}) }],
      ["limit 100, first page", { limit: 100 }],
      ["status=bounced (4%), first page", { status: "bounced" }],
      ["status=complained (0.5%), deep page via cursor", { status: "complained", cursor: await middleCursor({ status: "complained" }) }],
      ["since = 24 h ago, first page", { since: new Date(Date.now() - 86_400_000) }],
      ["tag=campaign (30%), first page", { tag: "campaign" }],
      ["tag=rare (0.01%), first page: worst case", { tag: "rare" }],
      ["tag=absent (no row has it): worst case", { tag: "absent" }],
      ["q=gmail (20%), first page", { q: "gmail" }],
      ["q=shipped (25%, subject), first page", { q: "SHIPPED" }],
      ["q=user777777@ (1 row): worst case", { q: "user777777@" }],
      ["status=bounced + q=gmail + tag=campaign", { status: "bounced", q: "gmail", tag: "campaign" }],
      // A contact's page: one address's messages, whatever its case.
      ["recipient=the newest message's address, upper-cased", { recipient: firstPage.items[0]?.recipient.toUpperCase() }],
      ["recipient=nobody@absent.example (no row): worst case", { recipient: "nobody@absent.example" }],
    ];

    const runs: Scenario[] = scenarios.map(([title, options]) => ({
      title,
      run: async () => (await log.list({ companyId, ...options })).items.length,
    }));
    const someId = firstPage.items[0]?.id;
    if (someId) runs.push({ title: "get (newest message)", run: async () => (await log.get({ companyId, id: someId })).events.length });
    await explainScenarios(runs, { pool, recorded, runs: RUNS });
  } finally {
    await orm.close();
  }
}

await main();
