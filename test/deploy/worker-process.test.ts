/**
 * A worker process as deployments run it (`node src/worker-main.ts`, apart
 * from the API process `node src/api-main.ts`), against a real PostgreSQL
 * and a Temporal frontend that takes only mutual TLS (a TLS terminator with
 * a private CA in front of a dev server, as a cluster with mTLS or Temporal
 * Cloud): the TEMPORAL_TLS_* settings reach the API's client and the
 * worker; its own listener (/livez, /readyz, /metrics), the Temporal SDK's
 * metrics exporter, and graceful shutdown at SIGTERM (activities in flight
 * finish; the process exits within SHUTDOWN_TIMEOUT_MS even when they
 * cannot).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";
import { eventually, jsonLines, run, sample } from "./processes.ts";
import { startTemporalTlsProxy, TEMPORAL_TLS_SERVER_NAME, type TemporalTlsProxy } from "./temporal-tls-proxy.ts";
import { type ApiProcess, readySender, scrape, send, type Sender, type Shared, startApi, startWorker, type WorkerProcess } from "./topology.ts";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

interface Readyz {
  status: string;
  checks: Record<string, string>;
}

async function readyz(url: string): Promise<{ status: number; body: Readyz }> {
  const response = await fetch(new URL("/readyz", url));
  return { status: response.status, body: (await response.json()) as Readyz };
}

async function adminSql(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe("a worker process", { timeout: 180_000 }, () => {
  let temporal: TemporalDevServer;
  let proxy: TemporalTlsProxy;
  let db: TestDatabase;
  let shared: Shared;
  let api: ApiProcess;
  let worker: WorkerProcess;
  let sender: Sender;
  const others: WorkerProcess[] = [];

  beforeAll(async () => {
    [temporal, db] = await Promise.all([startTemporalDevServer(), createTestDatabase()]);
    proxy = await startTemporalTlsProxy(temporal.address);
    shared = {
      databaseUrl: db.url,
      temporalAddress: proxy.address,
      taskQueue: `worker-process-${randomBytes(3).toString("hex")}`,
      env: {
        TEMPORAL_TLS_CLIENT_CERT_PATH: proxy.files.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: proxy.files.clientKey,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: proxy.files.ca,
        TEMPORAL_TLS_SERVER_NAME,
      },
    };
    api = await startApi(shared);
    // Each handoff takes a while, so that SIGTERM can find one in flight.
    worker = await startWorker(shared, { SIMULATOR_HANDOFF_DELAY_MS: "2500" });
    sender = await readySender(api, 100);
  }, 300_000);

  afterAll(async () => {
    await Promise.all([worker?.process.kill(), ...others.map((other) => other.process.kill()), api?.process.kill()]);
    await proxy?.close();
    await temporal?.stop();
    await db?.drop();
  });

  async function message(id: string): Promise<{ status: string; sentAt: string | null }> {
    const response = await fetch(new URL(`/mail/v1/messages/${id}`, api.httpUrl), { headers: { authorization: `Bearer ${sender.secret}` } });
    return (await response.json()) as { status: string; sentAt: string | null };
  }

  async function sendOne(local = "delivered"): Promise<string> {
    const response = await send(api.httpUrl, sender.secret, {
      to: `${local}+${randomBytes(3).toString("hex")}@customer.example`,
      subject: "Your receipt",
      html: "<p>Thanks</p>",
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  it("reaches Temporal over mTLS only, with the client certificate of TEMPORAL_TLS_*", async () => {
    // The API started its workflows and registered the search attributes, the worker polls: all through the TLS terminator.
    expect(proxy.handshakes.authorized).toBeGreaterThanOrEqual(2);
    const refusedBefore = proxy.handshakes.refused;
    const { TEMPORAL_TLS_CLIENT_CERT_PATH: _, TEMPORAL_TLS_CLIENT_KEY_PATH: __, ...withoutClientCertificate } = shared.env ?? {};
    const refused = run("src/worker-main.ts", {
      DATABASE_URL: shared.databaseUrl,
      TEMPORAL_ADDRESS: shared.temporalAddress,
      TEMPORAL_TASK_QUEUE: shared.taskQueue,
      WORKER_OPERATOR_PORT: "0",
      LOG_LEVEL: "warn",
      ...withoutClientCertificate,
    });
    expect(await refused.exited).toBe(1);
    expect(proxy.handshakes.refused).toBeGreaterThan(refusedBefore);
  });

  it("is live, ready while PostgreSQL and Temporal answer and it polls, and counts its own work in /metrics", async () => {
    const live = await fetch(new URL("/livez", worker.url));
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });
    expect(await readyz(worker.url)).toEqual({ status: 200, body: { status: "ok", checks: { postgres: "ok", temporal: "ok", worker: "ok" } } });
    expect((await fetch(new URL("/nothing-here", worker.url))).status).toBe(404);

    const before = await scrape(worker.url);
    const ids = [await sendOne(), await sendOne()];
    for (const id of ids) await eventually(() => message(id), (m) => m.sentAt !== null, 60_000, `message ${id} handed off`);
    const after = await scrape(worker.url);
    const moved = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(moved("mail_worker_activities_total", { activity: "attemptHandOff", outcome: "completed" })).toBeGreaterThanOrEqual(2);
    expect(sample(after, "mail_worker_activity_duration_seconds_count", { activity: "attemptHandOff" })).toBeGreaterThanOrEqual(2);
    expect(sample(after, "mail_db_pool_connections", { state: "max" })).toBe(10);
    expect(after).toMatch(/^process_resident_memory_bytes \d/m);
  });

  it("exports the Temporal SDK's own metrics on TEMPORAL_METRICS_ADDRESS", async () => {
    const text = await eventually(
      () => scrape(worker.sdkMetricsUrl),
      (body) => body.includes("temporal_worker_task_slots_available") && body.includes("temporal_request"),
      20_000,
      "the SDK's metrics",
    );
    expect(sample(text, "temporal_worker_task_slots_available", { worker_type: "ActivityWorker" })).toBeGreaterThan(0);
    expect(sample(text, "temporal_request")).toBeGreaterThan(0);
    expect(text).toContain(`task_queue="${shared.taskQueue}"`);
  });

  it("is not ready while PostgreSQL refuses connections, live throughout, and ready again after", async () => {
    await adminSql(`alter database ${db.name} allow_connections false`);
    try {
      await adminSql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${db.name}' and pid <> pg_backend_pid()`);
      const answer = await readyz(worker.url);
      expect(answer.status).toBe(503);
      expect(answer.body.status).toBe("unavailable");
      expect(answer.body.checks.postgres).not.toBe("ok");
      expect(answer.body.checks).toMatchObject({ temporal: "ok", worker: "ok" });
      expect((await fetch(new URL("/livez", worker.url))).status).toBe(200);
    } finally {
      await adminSql(`alter database ${db.name} allow_connections true`);
    }
    await eventually(() => readyz(worker.url), (answer) => answer.status === 200, 10_000, "ready again");
  });

  it("at SIGTERM stops polling, lets the handoff in flight finish, logs what it drained, and exits 0", async () => {
    const id = await sendOne();
    await eventually(
      () => scrape(worker.url),
      (text) => sample(text, "mail_worker_activities_in_flight", { activity: "attemptHandOff" }) === 1,
      30_000,
      "a handoff in flight",
    );
    expect(await worker.process.stop()).toBe(0);
    // No other worker runs: the handoff was finished by the one that was stopping.
    expect((await message(id)).sentAt).not.toBeNull();
    const [drained] = jsonLines(worker.process.output(), /^shutdown: drained/);
    expect(drained).toMatchObject({ process: "worker", signal: "SIGTERM", inFlightAtSignal: { activities: 1 } });
    expect(typeof drained?.drainMs).toBe("number");
    // The listener went with it.
    await expect(fetch(new URL("/livez", worker.url))).rejects.toThrow();
  });

  it("exits within SHUTDOWN_TIMEOUT_MS when an activity cannot finish, saying what was left, and is not ready while Temporal is down", async () => {
    const stuck = await startWorker(shared, { SIMULATOR_HANDOFF_DELAY_MS: "60000", SHUTDOWN_TIMEOUT_MS: "3000" });
    others.push(stuck);
    await sendOne();
    await eventually(
      () => scrape(stuck.url),
      (text) => sample(text, "mail_worker_activities_in_flight", { activity: "attemptHandOff" }) === 1,
      30_000,
      "a handoff in flight",
    );
    await temporal.stop();
    const answer = await readyz(stuck.url);
    expect(answer.status).toBe(503);
    expect(answer.body.checks.temporal).not.toBe("ok");

    expect(await stuck.process.stop()).toBe(1);
    const [timedOut] = jsonLines(stuck.process.output(), /^shutdown: not drained within 3000 ms/);
    expect(timedOut).toMatchObject({ process: "worker", timeoutMs: 3000, inFlightAtSignal: { activities: 1 }, stillInFlight: { activities: 1 } });
  });
});
