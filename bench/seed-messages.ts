/**
 * Seeds a message log for the read benchmarks (bench/explain-message-log.ts):
 * N messages (default 1,000,000) for one company, N/20 for each of three other
 * companies (so that every query has foreign rows to stay away from), and
 * their `sent` / `delivery` events.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/mail_bench \
 *     node bench/seed-messages.ts [N]
 *
 * The database must exist (it is migrated first). Everything is generated in
 * PostgreSQL with `insert ... select from generate_series`, in chunks, so
 * nothing crosses the wire but the statements. Never point this at a real
 * database: it only adds rows, but a million of them.
 */
import { migrate, openOrm } from "../src/adapters/postgres/orm.ts";
import { pgPool, type PoolClient } from "../src/adapters/postgres/sql.ts";

const CHUNK = 200_000;
const OTHER_COMPANIES = 3;
/** The log spans this many days, ending now. */
const SPAN_DAYS = 180;

/**
 * Distribution of the seeded data (explain-message-log.ts relies on it):
 * - status, by bucket (i * 7919) % 1000: delivered 70%, sent 15%, queued 3%,
 *   deferred 1%, processing 1%, bounced 4%, complained 0.5%, rejected 1%,
 *   failed 2%, suppressed 2.5%;
 * - tags: `campaign` on 30%, `order` on 20%, `rare` on 0.01%, none on the rest;
 * - recipient `user<i>@<domain>` over five domains (gmail.com 20%), subject
 *   one of four texts;
 * - created_at evenly over the last 180 days with sub-second jitter, and
 *   every two consecutive rows share the exact same created_at (ties that
 *   only the id breaks, as the keyset pagination must handle).
 */
const INSERT_MESSAGES = `
  insert into message (id, company_id, recipient, recipient_domain, from_email, subject, status, tags,
                       error_code, provider, provider_message_id, created_at, sent_at, last_event_at,
                       workflow_started_at)
  select gen_random_uuid(), $1::uuid, s.recipient, s.domain, 'noreply@shop.test', s.subject, s.status, s.tags,
         case s.status when 'failed' then 'MAIL_CREDITS_EXHAUSTED' when 'suppressed' then 'SUPPRESSED' end,
         case when s.handed_off then 'simulator' end,
         case when s.handed_off then 'sim-' || $1::text || '-' || s.i end,
         s.created_at,
         case when s.handed_off then s.created_at + interval '1 second' end,
         case when s.handed_off then s.created_at + interval '5 seconds' end,
         s.created_at
    from (
      select g.i,
             'user' || g.i || '@' || d.domain as recipient,
             d.domain,
             (array['Your receipt #' || g.i, 'Password reset', 'Welcome to the shop', 'Your order has shipped'])[1 + g.i % 4] as subject,
             st.status,
             st.status in ('sent', 'delivered', 'bounced', 'complained') as handed_off,
             case
               when g.i % 10000 = 4242 then jsonb_build_object('rare', 'yes')
               when g.i % 10 < 3 then jsonb_build_object('campaign', 'spring-' || g.i % 7)
               when g.i % 10 < 5 then jsonb_build_object('order', g.i::text)
               else '{}'::jsonb
             end as tags,
             $4::timestamptz
               + ((g.i / 2) * 2 * $5::bigint) * interval '1 microsecond'
               + (((g.i / 2) * 104729) % 1000000) * interval '1 microsecond' as created_at
        from generate_series($2::bigint, $3::bigint) as g(i)
        cross join lateral (
          select (array['gmail.com', 'yahoo.com', 'example.com', 'outlook.com', 'corp' || g.i % 1000 || '.test'])[1 + g.i % 5] as domain
        ) d
        cross join lateral (
          select case
                   when b < 700 then 'delivered' when b < 850 then 'sent' when b < 880 then 'queued'
                   when b < 890 then 'deferred' when b < 900 then 'processing' when b < 940 then 'bounced'
                   when b < 945 then 'complained' when b < 955 then 'rejected' when b < 975 then 'failed'
                   else 'suppressed'
                 end as status
            from (select (g.i * 7919) % 1000 as b) x
        ) st
    ) s`;

const INSERT_EVENTS = `
  insert into message_event (message_id, company_id, type, at)
  select m.id, m.company_id, e.type, m.created_at + e.after
    from message m
    cross join lateral (values ('sent', interval '1 second'), ('delivery', interval '5 seconds')) as e(type, after)
   where m.company_id = $1
     and m.status in ('sent', 'delivered', 'bounced', 'complained')
     and (e.type = 'sent' or m.status = 'delivered')`;

async function seedCompany(client: PoolClient, name: string, count: number): Promise<string> {
  const { rows } = await client.query<{ id: string }>(`insert into company (name) values ($1) returning id`, [name]);
  const companyId = rows[0]?.id;
  if (!companyId) throw new Error("company insert returned no row");

  const spanMicros = BigInt(SPAN_DAYS) * 86_400_000_000n;
  const stepMicros = (spanMicros / BigInt(Math.max(1, count))).toString();
  const start = new Date(Date.now() - SPAN_DAYS * 86_400_000);
  for (let from = 1; from <= count; from += CHUNK) {
    const to = Math.min(count, from + CHUNK - 1);
    const started = performance.now();
    await client.query(INSERT_MESSAGES, [companyId, from, to, start, stepMicros]);
    console.log(`  ${name}: messages ${from}..${to} in ${Math.round(performance.now() - started)} ms`);
  }
  const started = performance.now();
  const events = await client.query(INSERT_EVENTS, [companyId]);
  console.log(`  ${name}: ${events.rowCount} events in ${Math.round(performance.now() - started)} ms`);
  return companyId;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("set DATABASE_URL to a throw-away database");
  const count = Number(process.argv[2] ?? 1_000_000);
  if (!Number.isInteger(count) || count < 1) throw new Error(`message count must be a positive integer, got ${process.argv[2]}`);

  const orm = await openOrm(databaseUrl, { poolMax: 2 });
  try {
    await migrate(orm);
    const pool = await pgPool(orm);
    const client = await pool.connect();
    try {
      // A benchmark seed: losing the tail of it in a crash costs nothing.
      await client.query("set synchronous_commit = off");
      const started = performance.now();
      const companyId = await seedCompany(client, "bench-main", count);
      for (let n = 1; n <= OTHER_COMPANIES; n++) {
        await seedCompany(client, `bench-other-${n}`, Math.max(1, Math.floor(count / 20)));
      }
      // Fresh statistics and visibility map, as a long-running database would have.
      await client.query("vacuum (analyze) message");
      await client.query("vacuum (analyze) message_event");
      console.log(`seeded in ${Math.round((performance.now() - started) / 1000)} s; main company ${companyId}`);
    } finally {
      client.release();
    }
  } finally {
    await orm.close();
  }
}

await main();
