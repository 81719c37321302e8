/**
 * GET /mail/v1/contacts and GET /mail/v1/contacts/{id} on a million
 * contacts: seeds N contacts (default 1,000,000) for one company and N/10
 * for each of two others, then, for every list filter, their combinations,
 * cursor pages deep in the list and the reads by id and by address, prints
 * the use case's median wall time and `EXPLAIN (ANALYZE, BUFFERS)` of
 * exactly the statements it sent (recorded, never copied: bench/lib/explain.ts).
 * Plans that read far more rows than they return are flagged with `!!!`.
 *
 *   npm run bench:contacts                     (a scratch database, dropped after)
 *   CONTACTS=100000 npm run bench:contacts     (smaller)
 *   BENCH_KEEP_DATABASE=1 npm run bench:contacts, then
 *   DATABASE_URL=<the printed URL> npm run bench:contacts   (reuses the seeded rows)
 *
 * Also writes bench/results/contacts-reads.json (every plan, for
 * docs/benchmarks.md). Server: BENCH_DATABASE_ADMIN_URL (default the local
 * trust-auth superuser).
 *
 * Seeding is done by PostgreSQL itself (`insert ... select from
 * generate_series`, in chunks), with the contact indexes dropped first and
 * rebuilt after from their own definitions (pg_get_indexdef), which is many
 * times faster than maintaining two GIN indexes row by row; then VACUUM
 * ANALYZE, as a long-running database would have. Distribution, by the row
 * number g of the company:
 * - status (g % 10000): subscribed 70%, pending 25%, unsubscribed 4%,
 *   bounced 0.99%, complained 0.01%;
 * - tags: `customer` on 30%, `vip` on 2% (also customers), `rare` on 0.01%;
 *   `wholesale` on 50% of the other companies' contacts and on 0.01% of the
 *   big one's (the GIN index is not per company: a tag that is common
 *   elsewhere);
 * - lists of the big company: Newsletter 30% of its contacts, VIP 1%,
 *   Partners 0.1%, Beta 0.01%;
 * - names: 8 first names x 97 suffixes, 8 last names x 89 suffixes;
 *   addresses `user<g>@<one of five domains>` (gmail.com 20%);
 * - created_at: one every 37 seconds back from now (about 14 months).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Pool } from "../src/adapters/postgres/sql.ts";
import { pgPool } from "../src/adapters/postgres/sql.ts";
import { migrate, openOrm } from "../src/adapters/postgres/orm.ts";
import { postgresContactStore } from "../src/adapters/postgres/contacts/postgres-contact-store.ts";
import { PostgresContactListStore } from "../src/adapters/postgres/contacts/postgres-contact-list-store.ts";
import { CONTACT_CURSOR, contactFiltersFingerprint, Contacts, type ListContactsCommand, parseListQuery } from "../src/capabilities/contacts/index.ts";
import { createKeysetCursorCodec } from "../src/capabilities/shared/keyset-cursor.ts";
import { createScratchDatabase, type ScratchDatabase } from "./lib/database.ts";
import { explainScenarios, keyLines, recordingPool, type RecordedStatement, type Scenario } from "./lib/explain.ts";

/** A list query of the bench's company. */
type ListContactsOptions = Omit<ListContactsCommand, "companyId">;

const SECRET = "bench-cursor-secret";
const RUNS = 5;
const CHUNK = 200_000;
const RESULTS = path.join(import.meta.dirname, "results", "contacts-reads.json");

const SEED = `
  insert into contact (company_id, email, email_normalized, first_name, last_name, tags, status, created_at, updated_at)
  select $1::uuid, e.email, e.email, f.first_name, f.last_name,
         case when $4::boolean
              then case when g % 2 = 0 then array['wholesale'] else '{}' end
              else array_remove(array[
                     case when g % 10 < 3 then 'customer' end,
                     case when g % 100 < 2 then 'vip' end,
                     case when g % 10000 = 4242 then 'rare' end,
                     case when g % 10000 = 777 then 'wholesale' end], null)
         end,
         case when g % 10000 < 7000 then 'subscribed' when g % 10000 < 9500 then 'pending'
              when g % 10000 < 9900 then 'unsubscribed' when g % 10000 < 9999 then 'bounced' else 'complained' end,
         now() - (g * interval '37 seconds'), now()
    from generate_series($2::int, $3::int) as g
   cross join lateral (select 'user' || g || '@' || (array['gmail.com', 'example.com', 'shop.test', 'mail.example', 'corp.example'])[1 + g % 5] as email) e
   cross join lateral (select (array['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken'])[1 + g % 8] || (g % 97) as first_name,
                              (array['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson'])[1 + (g / 8) % 8] || (g % 89) as last_name) f`;

/** List name -> which of the big company's contacts are members (by a hash of the id, so members are spread over time). */
const LISTS: readonly [string, string][] = [
  ["Newsletter", "abs(hashtext(id::text)) % 100 < 30"],
  ["VIP", "abs(hashtext(id::text)) % 100 = 42"],
  ["Partners", "abs(hashtext(id::text)) % 1000 = 42"],
  ["Beta", "abs(hashtext(id::text)) % 10000 = 42"],
];

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

async function seed(pool: Pool, size: number): Promise<void> {
  const client = await pool.connect();
  try {
    // A benchmark seed: losing its tail in a crash costs nothing; big sorts for the index builds.
    await client.query("set synchronous_commit = off");
    await client.query("set maintenance_work_mem = '512MB'");
    // The pool's statement_timeout is for requests; an index build on a million rows takes longer.
    await client.query("set statement_timeout = 0");
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `select i.relname as name, pg_get_indexdef(i.oid) as definition
         from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
        where t.relname in ('contact', 'contact_list_member') and not x.indisprimary`,
    );
    for (const index of indexes) await client.query(`drop index ${index.name}`);

    const companies: [string, number, boolean][] = [];
    for (const [name, count, other] of [
      ["Bench Big", size, false],
      ["Bench Other 1", Math.ceil(size / 10), true],
      ["Bench Other 2", Math.ceil(size / 10), true],
    ] as const) {
      const { rows } = await client.query<{ id: string }>(`insert into company (name) values ($1) returning id`, [name]);
      companies.push([rows[0]?.id ?? "", count, other]);
    }
    for (const [companyId, count, other] of companies) {
      for (let from = 1; from <= count; from += CHUNK) {
        const started = performance.now();
        await client.query(SEED, [companyId, from, Math.min(count, from + CHUNK - 1), other]);
        console.log(`  contacts ${from}..${Math.min(count, from + CHUNK - 1)} of ${count}${other ? " (other company)" : ""} in ${seconds(started)}`);
      }
    }
    const big = companies[0]?.[0] ?? "";
    for (const [name, members] of LISTS) {
      const started = performance.now();
      const { rows } = await client.query<{ id: string }>(`insert into contact_list (company_id, name) values ($1, $2) returning id`, [big, name]);
      const { rowCount } = await client.query(
        `insert into contact_list_member (company_id, list_id, contact_id)
         select $1, $2, id from contact where company_id = $1 and ${members}`,
        [big, rows[0]?.id],
      );
      console.log(`  list ${name}: ${rowCount} members in ${seconds(started)}`);
    }
    for (const index of indexes) {
      const started = performance.now();
      await client.query(index.definition);
      console.log(`  index ${index.name} rebuilt in ${seconds(started)}`);
    }
    await client.query("vacuum (analyze) contact");
    await client.query("vacuum (analyze) contact_list_member");
    await client.query("analyze contact_list");
  } finally {
    client.release();
  }
}

async function main(): Promise<void> {
  const size = setting("CONTACTS", Number(process.argv[2] ?? 1_000_000));
  let scratch: ScratchDatabase | undefined;
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    scratch = await createScratchDatabase("mail_bench_contacts");
    databaseUrl = scratch.url;
    console.log(`scratch database ${scratch.name}`);
  }
  const orm = await openOrm(databaseUrl, { poolMax: 2 });
  let completed = false;
  try {
    await migrate(orm);
    const pool = await pgPool(orm);
    const { rows: existing } = await pool.query<{ n: string }>(`select count(*) as n from contact`);
    if (existing[0]?.n === "0") {
      const started = performance.now();
      console.log(`seeding ${size} contacts (+ ${2 * Math.ceil(size / 10)} of two other companies)`);
      await seed(pool, size);
      console.log(`seeded in ${seconds(started)}`);
    }
    const { rows: biggest } = await pool.query<{ company_id: string; n: string }>(
      `select company_id, count(*) as n from contact group by 1 order by 2 desc limit 1`,
    );
    const companyId = biggest[0]?.company_id ?? "";
    const { rows: all } = await pool.query<{ n: string }>(`select count(*) as n from contact`);
    const { rows: lists } = await pool.query<{ id: string; name: string; members: string }>(
      `select l.id, l.name, (select count(*) from contact_list_member m where m.list_id = l.id) as members
         from contact_list l where l.company_id = $1 order by l.name`,
      [companyId],
    );
    const listId = (name: string): string => lists.find((list) => list.name === name)?.id ?? "";
    const { rows: sizes } = await pool.query<{ table: string; size: string }>(
      `select relname as table, pg_size_pretty(pg_total_relation_size(oid)) as size from pg_class where relname in ('contact', 'contact_list_member')`,
    );
    console.log(`company ${companyId}: ${biggest[0]?.n} contacts (${all[0]?.n} in the table); lists ${lists.map((l) => `${l.name} ${l.members}`).join(", ")}`);
    console.log(`sizes with indexes: ${sizes.map((s) => `${s.table} ${s.size}`).join(", ")}\n`);

    const recorded: RecordedStatement[] = [];
    const recording = () => Promise.resolve(recordingPool(pool, recorded));
    const contacts = new Contacts({ contacts: postgresContactStore(recording), lists: new PostgresContactListStore(orm), cursorSecret: SECRET });

    // Halfway through the company's contacts, newest first: a cursor as the
    // use case would have issued it for the page ending there, with the
    // scenario's own filters (walking there would take 20,000 pages).
    const { rows: middle } = await pool.query<{ position_at: string; id: string }>(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at, id
         from contact where company_id = $1 order by created_at desc, id desc offset $2 limit 1`,
      [companyId, Math.floor(Number(biggest[0]?.n) / 2)],
    );
    const codec = createKeysetCursorCodec(SECRET, CONTACT_CURSOR);
    const deep = (options: ListContactsOptions): ListContactsOptions => ({
      ...options,
      cursor: codec.encode(companyId, contactFiltersFingerprint(parseListQuery(options).filters), {
        createdAt: middle[0]?.position_at ?? "",
        id: middle[0]?.id ?? "",
      }),
    });
    const first = await contacts.list({ companyId });
    const newest = first.items[0];
    if (!newest) throw new Error("no contacts");

    const listScenarios: [string, ListContactsOptions][] = [
      ["first page (limit 25)", {}],
      ["page 2 via nextCursor", { cursor: first.nextCursor ?? undefined }],
      ["deep page (halfway, via cursor)", deep({})],
      ["limit 100", { limit: 100 }],
      ["status=subscribed (70%)", { status: "subscribed" }],
      ["status=bounced (1%)", { status: "bounced" }],
      ["status=complained (0.01%)", { status: "complained" }],
      ["status=bounced, deep page", deep({ status: "bounced" })],
      ["tag=customer (30%)", { tag: "customer" }],
      ["tag=vip (2%)", { tag: "vip" }],
      ["tag=rare (0.01%)", { tag: "rare" }],
      ["tag=wholesale (0.01% here, 50% of the other companies)", { tag: "wholesale" }],
      ["tag=absent (no contact has it)", { tag: "absent" }],
      ["tag=vip, deep page", deep({ tag: "vip" })],
      ["q=lovelace1 (names, ~1%)", { q: "lovelace1" }],
      ["q=user42424@ (one contact)", { q: "user42424@" }],
      ["q=gmail (20%)", { q: "gmail" }],
      ["q=nobody-has-this (no contact)", { q: "nobody-has-this" }],
      ["q=zz (two characters, no contact)", { q: "zz" }],
      ["q=gmail, deep page", deep({ q: "gmail" })],
      ["listId=Newsletter (30%)", { listId: listId("Newsletter") }],
      ["listId=VIP (1%)", { listId: listId("VIP") }],
      ["listId=Partners (0.1%)", { listId: listId("Partners") }],
      ["listId=Beta (0.01%)", { listId: listId("Beta") }],
      ["listId=VIP, deep page", deep({ listId: listId("VIP") })],
      ["status=pending + tag=customer + q=ada", { status: "pending", tag: "customer", q: "ada" }],
      ["status=subscribed + listId=VIP", { status: "subscribed", listId: listId("VIP") }],
      ["tag=customer + q=gmail, deep page", deep({ tag: "customer", q: "gmail" })],
      ["status=bounced + listId=Beta (both rare)", { status: "bounced", listId: listId("Beta") }],
    ];
    const scenarios: Scenario[] = listScenarios.map(([title, options]) => ({
      title,
      run: async () => (await contacts.list({ companyId, ...options })).items.length,
    }));
    scenarios.push(
      { title: "GET by id", run: async () => ((await contacts.get({ companyId, idOrEmail: newest.id })) ? 1 : 0) },
      { title: "GET by email (mixed case)", run: async () => ((await contacts.get({ companyId, idOrEmail: newest.email.toUpperCase() })) ? 1 : 0) },
    );
    const results = await explainScenarios(scenarios, { pool, recorded, runs: RUNS, seqScanRows: 20_000 });

    console.log("summary (the first statement of each scenario is its page or row; the rest are list memberships)");
    console.log(`${"scenario".padEnd(58)} ${"items".padStart(5)} ${"median ms".padStart(10)} ${"exec ms".padStart(9)} ${"buffers".padStart(8)}  plan`);
    for (const result of results) {
      const main = result.statements[0];
      const plan = main ? (keyLines(main.plan).find((line) => /Scan/.test(line)) ?? "").replace(/\s*\(cost.*$/, "").replace(/^->\s*/, "") : "";
      console.log(
        `${result.title.slice(0, 58).padEnd(58)} ${String(result.count).padStart(5)} ${result.medianMs.toFixed(2).padStart(10)} ` +
          `${(main?.executionMs ?? Number.NaN).toFixed(2).padStart(9)} ${String(main?.sharedBuffers ?? "").padStart(8)}  ${plan}` +
          `${result.statements.some((s) => s.warnings.length > 0) ? "  !!!" : ""}`,
      );
    }
    await mkdir(path.dirname(RESULTS), { recursive: true });
    await writeFile(
      RESULTS,
      `${JSON.stringify({ at: new Date().toISOString(), contacts: Number(biggest[0]?.n), inTable: Number(all[0]?.n), lists, sizes, results }, null, 2)}\n`,
    );
    console.log(`\nwritten: ${path.relative(process.cwd(), RESULTS)}`);
    completed = true;
  } finally {
    await orm.close();
    if (scratch) {
      // A failed seed is never kept: a rerun on it would skip seeding.
      if (completed && process.env.BENCH_KEEP_DATABASE === "1") console.log(`kept: DATABASE_URL=${scratch.url}`);
      else await scratch.drop();
    }
  }
}

await main();
