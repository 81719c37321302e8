/**
 * The contact list reads on a large table: seeds N contacts (default
 * 500,000) for one company and N/10 for each of two others when the
 * database has none, then prints `EXPLAIN (ANALYZE, BUFFERS)` of exactly the
 * statements the contacts capability runs for each scenario, with the
 * capability's median wall time over a few warm runs:
 *
 *   createdb -h 127.0.0.1 -U postgres mail_bench_contacts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/mail_bench_contacts node bench/contacts-reads.ts [N]
 *
 * Seeded in PostgreSQL (`insert ... select from generate_series`): nothing
 * but statements crosses the wire. Distribution: status subscribed 70%,
 * pending 25%, unsubscribed 4%, bounced 1%; tag `customer` on 30%, `rare`
 * on 0.01%; 1% of the company's contacts on a list; names from a few
 * hundred first and last names; addresses `user<i>@<one of five domains>`.
 * Never point this at a real database.
 */
import type { Pool } from "../src/adapters/postgres/sql.ts";
import { pgPool } from "../src/adapters/postgres/sql.ts";
import { migrate, openOrm } from "../src/adapters/postgres/orm.ts";
import { postgresContactStore } from "../src/adapters/postgres/contacts/postgres-contact-store.ts";
import { PostgresContactListStore } from "../src/adapters/postgres/contacts/postgres-contact-list-store.ts";
import { createContacts, type ListContactsOptions } from "../src/capabilities/contacts/index.ts";

const SECRET = "bench-cursor-secret";
const RUNS = 5;

interface Recorded {
  readonly text: string;
  readonly values: unknown[];
}

/** The real pool, except that `query({ text, values })` is also written down. */
function recordingPool(pool: Pool, recorded: Recorded[]): Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property === "query") {
        return (config: Recorded) => {
          recorded.push({ text: config.text, values: config.values });
          return target.query(config.text, config.values);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function brief(value: unknown): unknown {
  return Array.isArray(value) && value.length > 3 ? `[${value.length} values]` : value;
}

const SEED = `
  insert into contact (company_id, email, email_normalized, first_name, last_name, tags, status, created_at, updated_at)
  select $1::uuid, e.email, e.email, f.first_name, f.last_name,
         case when g % 10000 = 0 then array['rare'] when g % 10 < 3 then array['customer'] else '{}' end,
         case when g % 100 < 70 then 'subscribed' when g % 100 < 95 then 'pending' when g % 100 < 99 then 'unsubscribed' else 'bounced' end,
         now() - (g * interval '37 seconds'), now()
    from generate_series($2::int, $3::int) as g
   cross join lateral (select 'user' || g || '@' || (array['gmail.com', 'example.com', 'shop.test', 'mail.example', 'corp.example'])[1 + g % 5] as email) e
   cross join lateral (select (array['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken'])[1 + g % 8] || (g % 97) as first_name,
                              (array['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson'])[1 + (g / 8) % 8] || (g % 89) as last_name) f`;

async function seed(pool: Pool, size: number): Promise<void> {
  const companies: string[] = [];
  for (const name of ["Bench Big", "Bench Other 1", "Bench Other 2"]) {
    const { rows } = await pool.query<{ id: string }>(`insert into company (name) values ($1) returning id`, [name]);
    companies.push(rows[0]?.id ?? "");
  }
  const sizes = [size, Math.ceil(size / 10), Math.ceil(size / 10)];
  for (const [i, companyId] of companies.entries()) {
    const total = sizes[i] ?? 0;
    for (let from = 1; from <= total; from += 100_000) {
      await pool.query(SEED, [companyId, from, Math.min(total, from + 99_999)]);
    }
  }
  const big = companies[0] ?? "";
  const { rows } = await pool.query<{ id: string }>(`insert into contact_list (company_id, name) values ($1, 'Bench list') returning id`, [big]);
  await pool.query(
    `insert into contact_list_member (company_id, list_id, contact_id)
     select $1, $2, id from contact where company_id = $1 and abs(hashtext(id::text)) % 100 = 0`,
    [big, rows[0]?.id],
  );
  await pool.query(`vacuum analyze contact`);
  await pool.query(`vacuum analyze contact_list_member`);
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("set DATABASE_URL to a database for the benchmark");
  const size = Number(process.argv[2] ?? 500_000);
  const orm = await openOrm(databaseUrl, { poolMax: 2 });
  try {
    await migrate(orm);
    const pool = await pgPool(orm);
    const { rows: existing } = await pool.query<{ n: string }>(`select count(*) as n from contact`);
    if (existing[0]?.n === "0") {
      const started = performance.now();
      await seed(pool, size);
      console.log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    const { rows: biggest } = await pool.query<{ company_id: string; n: string }>(
      `select company_id, count(*) as n from contact group by 1 order by 2 desc limit 1`,
    );
    const companyId = biggest[0]?.company_id ?? "";
    const { rows: lists } = await pool.query<{ id: string }>(`select id from contact_list where company_id = $1 limit 1`, [companyId]);
    console.log(`company ${companyId}: ${biggest[0]?.n} contacts\n`);

    const recorded: Recorded[] = [];
    const recording = () => Promise.resolve(recordingPool(pool, recorded));
    const contacts = createContacts({ contacts: postgresContactStore(recording), lists: new PostgresContactListStore(orm) }, { cursorSecret: SECRET });

    const first = await contacts.listContacts(companyId);
    const scenarios: [string, ListContactsOptions][] = [
      ["first page (limit 25)", {}],
      ["page 2 via nextCursor", { cursor: first.nextCursor ?? undefined }],
      ["limit 100", { limit: 100 }],
      ["status=bounced (1%)", { status: "bounced" }],
      ["tag=customer (30%)", { tag: "customer" }],
      ["tag=rare (0.01%): worst case of the GIN index", { tag: "rare" }],
      ["q=lovelace1 (name, ~1%)", { q: "lovelace1" }],
      ["q=user4242@ (one row): the trigram index", { q: "user4242@" }],
      ["q=gmail (20%)", { q: "gmail" }],
      ["q=zz (no trigram index use: two characters)", { q: "zz" }],
      ["listId (1%)", { listId: lists[0]?.id }],
      ["status=pending + tag=customer + q=ada", { status: "pending", tag: "customer", q: "ada" }],
    ];
    for (const [title, options] of scenarios) {
      const times: number[] = [];
      let items = 0;
      for (let n = 0; n < RUNS; n++) {
        recorded.length = 0;
        const started = performance.now();
        items = (await contacts.listContacts(companyId, options)).items.length;
        times.push(performance.now() - started);
      }
      console.log(`=== ${title}: ${items} items, median ${median(times).toFixed(2)} ms over ${RUNS} warm runs`);
      for (const statement of [...recorded]) {
        console.log(`--- ${statement.text.replace(/\s+/g, " ").trim().slice(0, 300)}`);
        console.log(`    values: ${JSON.stringify(statement.values.map(brief))}`);
        const { rows } = await pool.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers) ${statement.text}`, statement.values);
        for (const row of rows) console.log(`    ${row["QUERY PLAN"].slice(0, 220)}`);
      }
      console.log();
    }
  } finally {
    await orm.close();
  }
}

await main();
