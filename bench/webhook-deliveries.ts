/**
 * Webhook deliveries end to end, against a bare loop, in one run:
 *
 *   npm run bench:webhooks            (or: node bench/webhook-deliveries.ts)
 *
 * Starts what production runs (the API process with its outbox relay and
 * Temporal worker, from src/wiring/api.ts, on a Temporal dev server and a
 * scratch PostgreSQL database made for the run and dropped after), with a
 * local HTTPS receiver on 127.0.0.1 (self-signed, trusted by the sender
 * only; the test overrides are the only difference from production), and
 * measures:
 *
 * 1. throughput: EVENTS events (default 1000) written to the outbox at once,
 *    one endpoint subscribed: deliveries per second from the write until
 *    every delivery succeeded (fan-out, workflow starts, signed HTTPS
 *    posts, attempt records);
 * 2. delay: LATENCY_EVENTS events (default 50) published one by one through
 *    the EventsService, PAUSE_MS (default 100) apart: event recorded ->
 *    first attempt at the receiver, p50 / p95 / max;
 * 3. the bare loop: the same signed bodies, posted by the same HTTPS sender
 *    (SSRF check, new TLS connection per post) with the worker's
 *    concurrency, and nothing else: no outbox, no Temporal, no database.
 *
 * Settings: EVENTS, LATENCY_EVENTS, PAUSE_MS; DATABASE_ADMIN_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres, trust auth); the Temporal
 * CLI from TEMPORAL_CLI_PATH, PATH or ~/go/bin.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { HttpsWebhookSender } from "../src/adapters/http/webhook-sender.ts";
import { WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from "../src/capabilities/webhooks/brand.ts";
import { signatureHeader } from "../src/capabilities/webhooks/signing.ts";
import { WebhookTargetPolicy } from "../src/capabilities/webhooks/ssrf-policy.ts";
import { loadConfig } from "../src/config.ts";
import { EventsService } from "../src/gen/mail/v1/events_pb.js";
import { startTemporalDevServer } from "../src/runtime/temporal-dev-server.ts";
import { startApp } from "../src/wiring/api.ts";
import { makeTestCertificate, startHttpsReceiver } from "../test/adapters/http/https-receiver.ts";
import { HOOK_HOST, testResolver } from "../test/webhooks/api-support.ts";

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const OPERATOR_TOKEN = "bench-operator-token-0123456789";

async function main(): Promise<void> {
  const events = setting("EVENTS", 1000);
  const latencyEvents = setting("LATENCY_EVENTS", 50);
  const pauseMs = setting("PAUSE_MS", 100);
  const adminUrl = process.env.DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

  const dbName = `mail_bench_webhooks_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;

  const certificate = await makeTestCertificate([HOOK_HOST]);
  const receiver = await startHttpsReceiver(certificate);
  /** Delivery id -> when its first attempt reached the receiver. */
  const firstSeen = new Map<string, number>();
  receiver.handle((request, response) => {
    const id = String(request.headers[WEBHOOK_HEADERS.delivery.toLowerCase()]);
    if (!firstSeen.has(id)) firstSeen.set(id, Date.now());
    response.writeHead(200).end();
  });
  const temporal = await startTemporalDevServer();
  const config = {
    ...loadConfig({}),
    httpPort: 0,
    grpcPort: 0,
    operatorPort: 0,
    operatorToken: OPERATOR_TOKEN,
    temporalAddress: temporal.address,
    temporalTaskQueue: `bench-webhooks-${randomBytes(3).toString("hex")}`,
    runWorker: true,
    logLevel: "warn" as const,
  };
  const app = await startApp({
    config,
    databaseUrl: dbUrl.toString(),
    logger: { level: "warn" },
    webhooksTestOverrides: { resolver: testResolver(), allowLoopbackForTests: true, trustedCaForTests: certificate.cert },
  });
  const db = new pg.Client({ connectionString: dbUrl.toString() });
  await db.connect();

  try {
    const { rows } = await db.query<{ id: string }>(`insert into company (name) values ('Bench Co') returning id`);
    const companyId = (rows[0] as { id: string }).id;
    const url = `https://${HOOK_HOST}:${receiver.port}/bench`;
    const { secret } = await app.webhooks.webhooks.endpoints.create(companyId, { url, events: ["order.created"] });
    const order = { number: 1001, total: "49.90", currency: "EUR", lines: [{ sku: "A-1", quantity: 2 }] };

    // 1. Throughput.
    const before = firstSeen.size;
    const started = performance.now();
    await db.query(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
       select $1, 'order.created', now(), jsonb_build_object('integrationId', 'int_1', 'provider', 'woocommerce', 'order', $2::jsonb), 'bench:' || gen_random_uuid()
         from generate_series(1, $3)`,
      [companyId, JSON.stringify(order), events],
    );
    for (;;) {
      const done = await db.query<{ n: number }>(`select count(*)::int as n from webhook_delivery where state = 'succeeded'`);
      if ((done.rows[0]?.n ?? 0) >= events) break;
      await sleep(50);
    }
    const throughputSeconds = (performance.now() - started) / 1000;
    const received = firstSeen.size - before;
    // Where the time went: the relay's part (every workflow started) against the whole.
    const { rows: phases } = await db.query<{ started_s: number }>(
      `select extract(epoch from max(d.workflow_started_at) - min(e.created_at))::float8 as started_s
         from webhook_delivery d join webhook_event e on e.id = d.event_id`,
    );
    const allStartedSeconds = phases[0]?.started_s ?? Number.NaN;

    // 2. Delay from the event to its first attempt, one event at a time.
    const operator: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
      return next(req);
    };
    const publisher = createClient(EventsService, createConnectTransport({ baseUrl: app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
    const published: string[] = [];
    for (let i = 0; i < latencyEvents; i++) {
      const { id } = await publisher.publishEvent({
        companyId,
        eventId: randomUUID(),
        event: "order.created",
        occurredAt: timestampFromDate(new Date()),
        data: { case: "order", value: { integrationId: "int_1", provider: "woocommerce", order } },
      });
      published.push(id);
      await sleep(pauseMs);
    }
    const delays: number[] = [];
    for (;;) {
      const { rows: latency } = await db.query<{ delivery_id: string; recorded_ms: string }>(
        `select d.id as delivery_id, (extract(epoch from e.created_at) * 1000)::text as recorded_ms
           from webhook_delivery d join webhook_event e on e.id = d.event_id
          where d.event_id = any($1::uuid[])`,
        [published],
      );
      const seen = latency.filter((row) => firstSeen.has(row.delivery_id));
      if (seen.length === latencyEvents) {
        for (const row of seen) delays.push((firstSeen.get(row.delivery_id) as number) - Number(row.recorded_ms));
        break;
      }
      await sleep(50);
    }
    delays.sort((a, b) => a - b);

    // 3. The bare loop: the same signed bodies through the same sender, the worker's concurrency.
    const concurrency = Math.max(1, (config.workerPoolMax ?? 10) - 2);
    const sender = new HttpsWebhookSender({
      policy: new WebhookTargetPolicy({ resolver: testResolver(), allowLoopbackForTests: true }),
      trustedCaForTests: certificate.cert,
    });
    const bodies = Array.from({ length: events }, () => {
      const id = randomUUID();
      const at = new Date();
      return {
        id,
        body: JSON.stringify({ id, event: "order.created", occurredAt: at.toISOString(), data: { integrationId: "int_1", provider: "woocommerce", order } }),
      };
    });
    let next = 0;
    let failures = 0;
    const loopStarted = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < bodies.length; i = next++) {
          const { id, body } = bodies[i] as { id: string; body: string };
          const outcome = await sender.post({
            url,
            body,
            headers: {
              "content-type": "application/json",
              "user-agent": WEBHOOK_USER_AGENT,
              [WEBHOOK_HEADERS.signature]: signatureHeader(body, [secret], Math.floor(Date.now() / 1000)),
              [WEBHOOK_HEADERS.delivery]: id,
              [WEBHOOK_HEADERS.attempt]: "1",
            },
          });
          if (!outcome.ok) failures++;
        }
      }),
    );
    const loopSeconds = (performance.now() - loopStarted) / 1000;

    const lines = [
      `webhook deliveries, ${events} events to one endpoint (local HTTPS receiver, Temporal dev server, PostgreSQL)`,
      `  service:   ${(events / throughputSeconds).toFixed(1)} deliveries/s (${events} succeeded in ${throughputSeconds.toFixed(2)} s; receiver saw ${received} delivery ids)`,
      `    (every delivery's workflow started ${allStartedSeconds.toFixed(2)} s after the events were written)`,
      `  bare loop: ${(events / loopSeconds).toFixed(1)} posts/s (${events} signed posts, ${concurrency} at a time, in ${loopSeconds.toFixed(2)} s, ${failures} failed)`,
      `  service / bare loop: ${((events / throughputSeconds) / (events / loopSeconds) * 100).toFixed(1)} %`,
      `event -> first attempt, ${latencyEvents} events published ${pauseMs} ms apart through the EventsService:`,
      `  p50 ${percentile(delays, 50).toFixed(0)} ms, p95 ${percentile(delays, 95).toFixed(0)} ms, max ${percentile(delays, 100).toFixed(0)} ms`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await db.end();
    await app.close();
    await temporal.stop();
    await receiver.close();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
