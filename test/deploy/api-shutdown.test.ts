/**
 * Graceful shutdown of the API process as deployments run it
 * (`node src/api-main.ts`): at SIGTERM it stops accepting connections,
 * answers the requests in flight, closes its pools and exits 0, logging one
 * line with how long the drain took and what was in flight; a request that
 * cannot finish does not hold it past SHUTDOWN_TIMEOUT_MS.
 *
 * The slow request is a real one: a send whose insert waits for a lock the
 * test holds on the message table.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";
import { eventually, jsonLines } from "./processes.ts";
import { type ApiProcess, readySender, send, type Sender, type Shared, startApi } from "./topology.ts";

describe("the API process at SIGTERM", { timeout: 120_000 }, () => {
  let temporal: TemporalDevServer;
  let db: TestDatabase;
  let shared: Shared;
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    [temporal, db] = await Promise.all([startTemporalDevServer(), createTestDatabase()]);
    shared = { databaseUrl: db.url, temporalAddress: temporal.address, taskQueue: `api-shutdown-${randomBytes(3).toString("hex")}` };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apis.map((api) => api.process.kill()));
    await temporal?.stop();
    await db?.drop();
  });

  async function started(extra: Record<string, string> = {}): Promise<ApiProcess> {
    const api = await startApi(shared, extra);
    apis.push(api);
    return api;
  }

  /** Holds an exclusive lock on the message table (reads go on, inserts wait) until release(). */
  async function lockMessages(): Promise<{ release(): Promise<void> }> {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query("begin");
    await client.query("lock table message in exclusive mode");
    let released: Promise<void> | undefined;
    return {
      release: () =>
        (released ??= (async () => {
          await client.query("rollback");
          await client.end();
        })()),
    };
  }

  /** Resolves once a statement of the API waits for the test's lock. */
  async function waitingForTheLock(): Promise<void> {
    await eventually(
      async () => {
        const { rows } = await db.query<{ n: string }>(
          `select count(*) as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and query ilike '%insert into message (%'`,
          [db.name],
        );
        return Number(rows[0]?.n);
      },
      (waiting) => waiting > 0,
      20_000,
      "a send waiting for the lock",
    );
  }

  function aSend(api: ApiProcess, sender: Sender): Promise<Response> {
    return send(api.httpUrl, sender.secret, { to: "delivered@customer.example", subject: "Receipt", html: "<p>Thanks</p>" });
  }

  it("stops accepting, answers the request in flight, logs the drain and exits 0", async () => {
    const api = await started();
    const sender = await readySender(api, 10);
    const lock = await lockMessages();
    try {
      const inFlight = aSend(api, sender);
      await waitingForTheLock();
      api.process.child.kill("SIGTERM");
      await api.process.waitFor(/"msg":"SIGTERM: shutting down"/);
      // New connections are refused while the one in flight is answered.
      await eventually(
        () => fetch(new URL("/livez", api.httpUrl)).then(() => "accepted", () => "refused"),
        (outcome) => outcome === "refused",
        10_000,
        "the listener closed",
      );
      await lock.release();
      const answer = await inFlight;
      expect(answer.status).toBe(202);
      expect(((await answer.json()) as { status: string }).status).toBe("queued");
    } finally {
      await lock.release();
    }
    expect(await api.process.exited).toBe(0);
    const [atSignal] = jsonLines(api.process.output(), /^SIGTERM: shutting down$/);
    expect(atSignal).toMatchObject({ process: "api", inFlight: { requests: 1 } });
    const [drained] = jsonLines(api.process.output(), /^shutdown: drained in \d+ ms$/);
    expect(drained).toMatchObject({ process: "api", signal: "SIGTERM", timeoutMs: 25_000, inFlightAtSignal: { requests: 1 } });
    const { rows } = await db.query<{ n: string }>("select count(*) as n from message where company_id = $1", [sender.companyId]);
    expect(Number(rows[0]?.n)).toBe(1);
  });

  it("exits within SHUTDOWN_TIMEOUT_MS when a request cannot finish, saying what was left", async () => {
    const api = await started({ SHUTDOWN_TIMEOUT_MS: "1500" });
    const sender = await readySender(api, 10);
    const lock = await lockMessages();
    try {
      const inFlight = aSend(api, sender).then(
        (response) => response.status,
        () => "connection closed",
      );
      await waitingForTheLock();
      expect(await api.process.stop()).toBe(1);
      const [timedOut] = jsonLines(api.process.output(), /^shutdown: not drained within 1500 ms/);
      expect(timedOut).toMatchObject({ process: "api", timeoutMs: 1500, inFlightAtSignal: { requests: 1 }, stillInFlight: { requests: 1 } });
      expect(await inFlight).toBe("connection closed");
    } finally {
      await lock.release();
    }
  });
});
