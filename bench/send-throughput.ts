/**
 * Throughput of POST /mail/v1/send and the end-to-end rate to `sent`.
 *
 *   node bench/send-throughput.ts [messages=2000] [concurrency=32]
 *
 * Runs the real service (API + worker, simulator provider) on a throw-away
 * database of the local PostgreSQL (BENCH_DATABASE_ADMIN_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres) and a Temporal dev server,
 * all on this machine. Prints accepted sends per second, p50/p99 latency of
 * the 202, and the rate from the first 202 to the last message `sent`.
 * The rate limit and sending pace are raised so they do not cap the figures.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { startApp } from "../src/wiring/api.ts";
import { loadConfig } from "../src/config.ts";
import { startTemporalDevServer } from "../src/runtime/temporal-dev-server.ts";

const total = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 32);
const adminUrl = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  const dbName = `mail_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;

  const temporal = await startTemporalDevServer({});
  const operatorToken = "bench-operator";
  const config = {
    ...loadConfig({}),
    httpPort: 0,
    grpcPort: 0,
    operatorToken,
    temporalAddress: temporal.address,
    requestsPerMinute: 10_000_000,
    sendingRatePerSecond: 100_000,
    sendingBurst: 100_000,
    logLevel: "error",
  };
  const app = await startApp({ config, databaseUrl: dbUrl.toString(), logger: { level: "error" } });
  try {
    const company = await app.accounts.service.createCompany("Bench Co");
    const { secret } = await app.accounts.service.createApiKey(company.id, "bench", ["mail.transactional.send", "mail.events.read"]);
    const domain = await app.sendingSetup.domains.createDomain(company.id, "bench.example");
    await app.sendingSetup.domains.verifyDomain(company.id, domain.id, { override: true });
    await app.sendingSetup.senders.createSender(company.id, { email: "bench@bench.example", makeDefault: true });
    await app.credits.adjust(company.id, total, "bench");

    const latencies: number[] = [];
    let next = 0;
    let failures = 0;
    const started = performance.now();
    const body = (i: number) =>
      JSON.stringify({ to: `delivered+${i}@customer.example`, subject: `Receipt ${i}`, html: `<p>Order ${i}</p>` });
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < total; i = next++) {
          const t0 = performance.now();
          const response = await fetch(`${app.httpUrl}/mail/v1/send`, {
            method: "POST",
            headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
            body: body(i),
          });
          await response.arrayBuffer();
          latencies.push(performance.now() - t0);
          if (response.status !== 202) failures++;
        }
      }),
    );
    const acceptedIn = (performance.now() - started) / 1000;

    const db = new pg.Client({ connectionString: dbUrl.toString() });
    await db.connect();
    let sent = 0;
    while (sent < total - failures) {
      const { rows } = await db.query<{ n: string }>(
        `select count(*)::text as n from message where status in ('sent', 'delivered')`,
      );
      sent = Number(rows[0]?.n ?? 0);
      if (performance.now() - started > 600_000) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const endToEnd = (performance.now() - started) / 1000;
    await db.end();

    latencies.sort((a, b) => a - b);
    console.log(`messages: ${total}, concurrency: ${concurrency}, non-202 answers: ${failures}`);
    console.log(`accepted: ${(total / acceptedIn).toFixed(0)} sends/s (${acceptedIn.toFixed(2)} s)`);
    console.log(`202 latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);
    console.log(`end to end (first 202 to last sent): ${(sent / endToEnd).toFixed(0)} messages/s (${sent} in ${endToEnd.toFixed(2)} s)`);
  } finally {
    await app.close();
    await temporal.stop();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
