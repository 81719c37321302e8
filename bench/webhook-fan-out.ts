/**
 * Throughput of the webhook fan-out (webhook_event outbox -> webhook_delivery)
 * and of the relay's "unstarted deliveries" scan, on a real PostgreSQL:
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/mail_bench node bench/webhook-fan-out.ts
 *
 * The database is migrated; the bench adds its own companies (COMPANIES,
 * default 20), each with ENDPOINTS endpoints (default 3, two subscribed to
 * `delivered`), records EVENTS events (default 20,000) spread over them,
 * then fans them out in batches of BATCH (default 100, the relay's) and
 * prints events/s and deliveries/s. Nothing is removed afterwards: use a
 * scratch database.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { migrate, openOrm } from "../src/adapters/postgres/orm.ts";
import { pgPool } from "../src/adapters/postgres/sql.ts";
import { PostgresWebhookOutbox } from "../src/adapters/postgres/webhooks/postgres-webhook-outbox.ts";

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("set DATABASE_URL to a scratch database");
  const companies = setting("COMPANIES", 20);
  const endpointsPerCompany = setting("ENDPOINTS", 3);
  const events = setting("EVENTS", 20_000);
  const batch = setting("BATCH", 100);

  const orm = await openOrm(databaseUrl, { poolMax: 4 });
  try {
    await migrate(orm);
    const pool = await pgPool(orm);
    const outbox = new PostgresWebhookOutbox(async () => pool);
    // Events left by an earlier run would be counted too.
    await pool.query(`update webhook_event set fanned_out_at = now() where fanned_out_at is null`);

    const companyIds: string[] = [];
    for (let c = 0; c < companies; c++) {
      const { rows } = await pool.query<{ id: string }>(`insert into company (name) values ($1) returning id`, [`bench ${c}`]);
      const companyId = (rows[0] as { id: string }).id;
      companyIds.push(companyId);
      for (let e = 0; e < endpointsPerCompany; e++) {
        await pool.query(
          `insert into webhook_endpoint (company_id, url, events, secret_sealed, created_at)
           values ($1, $2, $3, 'bench-not-a-secret', now() - interval '1 minute')`,
          [companyId, `https://hooks.example.com/${e}`, e % 3 === 2 ? ["bounced"] : ["delivered", "bounced"]],
        );
      }
    }
    const seedStarted = performance.now();
    await pool.query(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
       select ($1::uuid[])[1 + (i % cardinality($1::uuid[]))], 'delivered', now(), jsonb_build_object('n', i), $2 || ':' || i
         from generate_series(1, $3) as i`,
      [companyIds, `bench:${randomUUID()}`, events],
    );
    console.log(`seeded ${events} events for ${companies} companies in ${Math.round(performance.now() - seedStarted)} ms`);

    const before = await pool.query<{ n: string }>(`select count(*) as n from webhook_delivery`);
    const started = performance.now();
    let taken = 0;
    for (;;) {
      const n = await outbox.fanOut(batch);
      taken += n;
      if (n < batch) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const after = await pool.query<{ n: string }>(`select count(*) as n from webhook_delivery`);
    const made = Number(after.rows[0]?.n ?? 0) - Number(before.rows[0]?.n ?? 0);
    console.log(`fan-out: ${taken} events -> ${made} deliveries in ${seconds.toFixed(2)} s`);
    console.log(`         ${Math.round(taken / seconds)} events/s, ${Math.round(made / seconds)} deliveries/s (batch ${batch})`);

    const scanStarted = performance.now();
    const unstarted = await outbox.unstarted(batch, 0);
    console.log(`relay scan of unstarted deliveries (${unstarted.length} rows): ${(performance.now() - scanStarted).toFixed(1)} ms`);
  } finally {
    await orm.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
