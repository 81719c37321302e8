/**
 * Scaling out: two API processes (`node src/api-main.ts`) and two worker
 * processes (`node src/worker-main.ts`), separate OS processes on one
 * PostgreSQL database and one Temporal namespace, share a stream of sends
 * (with idempotent client retries sent to the OTHER API process, some while
 * the first request is still running) and of email-service events (the
 * simulator's, and complaint reports delivered to both API processes, as a
 * provider retrying its webhook on another replica does). Afterwards:
 *
 * - one message per idempotency key, each at its final status;
 * - each message handed to the email service once (the simulator's journal),
 *   with one `sent` event, and each provider event recorded once;
 * - credits charged once per message handed off, refunded once per
 *   rejection, and the balance says so;
 * - both API processes answered sends and both workers handed messages off
 *   (each process's own /metrics).
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { createTestDatabase, TEST_APPLICATION_NAME, type TestDatabase } from "../support/test-database.ts";
import { eventually, jsonLines, sample } from "../deploy/processes.ts";
import {
  type ApiProcess,
  readySender,
  scrape,
  send,
  type Sender,
  type Shared,
  startApi,
  startWorker,
  type WorkerProcess,
} from "../deploy/topology.ts";
import { CreditsService } from "../../src/gen/mail/v1/credits_pb.js";
import { operatorClient } from "../support/api-harness.ts";

const MESSAGES = 48;
const CREDITS = 1000;
/** Small pools, so that the stream fills them, and the connection count of docs/operations.md (below) is put to the test. */
const API_POOL_MAX = 3;
const WORKER_POOL_MAX = 3;
/** docs/operations.md, "Scaling out": API processes × (API_POOL_MAX + 2) + workers × (WORKER_POOL_MAX + 1). */
const MOST_CONNECTIONS = 2 * (API_POOL_MAX + 2) + 2 * (WORKER_POOL_MAX + 1);

/** Simulator recipients (docs/delivery-loop.md, "The email service behind us"), and what each ends as. */
const KINDS = [
  { local: "delivered", final: "delivered", events: ["delivered"] },
  { local: "bounce", final: "bounced", events: ["bounced"] },
  { local: "complaint", final: "complained", events: ["delivered", "complained"] },
  { local: "reject", final: "rejected", events: [] },
  { local: "transient", final: "delivered", events: ["delivered"] },
  // Delivered, then a complaint reported to both API processes (see below).
  { local: "delivered", final: "complained", events: ["delivered"], reported: true },
] as const;

const kindOf = (i: number) => KINDS[i % KINDS.length] as (typeof KINDS)[number];

interface Accepted {
  readonly id: string;
  readonly status: string;
  readonly replayed: boolean;
}

describe("two API processes and two workers on one database and one namespace", { timeout: 240_000 }, () => {
  let temporal: TemporalDevServer;
  let db: TestDatabase;
  let apis: ApiProcess[] = [];
  let workers: WorkerProcess[] = [];
  let sender: Sender;
  const samplers: { stop(): Promise<number> }[] = [];

  beforeAll(async () => {
    [temporal, db] = await Promise.all([startTemporalDevServer(), createTestDatabase()]);
    const shared: Shared = { databaseUrl: db.url, temporalAddress: temporal.address, taskQueue: `scale-${randomBytes(3).toString("hex")}` };
    // All four at once: the migrations and the search attributes are applied by whichever comes first.
    const apiEnv = { API_POOL_MAX: String(API_POOL_MAX) };
    const workerEnv = { WORKER_POOL_MAX: String(WORKER_POOL_MAX) };
    [apis, workers] = await Promise.all([
      Promise.all([startApi(shared, apiEnv), startApi(shared, apiEnv)]),
      Promise.all([startWorker(shared, workerEnv), startWorker(shared, workerEnv)]),
    ]);
    for (const worker of workers) {
      await eventually(() => fetch(new URL("/readyz", worker.url)).then((r) => r.status), (status) => status === 200, 30_000, "worker ready");
    }
    sender = await readySender(apis[0] as ApiProcess, CREDITS);
  }, 300_000);

  afterAll(async () => {
    await Promise.allSettled(samplers.map((sampler) => sampler.stop()));
    await Promise.all([...apis, ...workers].map((p) => p.process.kill()));
    await temporal?.stop();
    await db?.drop();
  });

  const api = (i: number): ApiProcess => apis[i % 2] as ApiProcess;

  function body(i: number): unknown {
    return { to: `${kindOf(i).local}+order${i}@customer.example`, subject: `Receipt ${i}`, html: `<p>Order ${i}</p>` };
  }

  async function accepted(response: Response): Promise<Accepted> {
    expect(response.status).toBe(202);
    return (await response.json()) as Accepted;
  }

  /** The most connections the four processes held at once, sampled every 100 ms (the test's own left out); stopped by afterAll at the latest. */
  function sampleConnections(): { stop(): Promise<number> } {
    let most = 0;
    let stopped = false;
    const sampling: Promise<void> = (async () => {
      while (!stopped) {
        const { rows } = await db.query<{ n: string }>(
          "select count(*) as n from pg_stat_activity where datname = current_database() and application_name <> $1",
          [TEST_APPLICATION_NAME],
        );
        most = Math.max(most, Number(rows[0]?.n ?? 0));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const sampler = {
      async stop() {
        stopped = true;
        await sampling;
        return most;
      },
    };
    samplers.push(sampler);
    return sampler;
  }

  it("shares the work with no duplicate message, handoff, event or charge", async () => {
    const connections = sampleConnections();
    // ---- the stream: every send to one API process, some retried on the other
    const ids = new Map<number, string>();
    const retries: Promise<void>[] = [];
    for (let batch = 0; batch < MESSAGES; batch += 8) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, offset) => {
          const i = batch + offset;
          const key = `order-${i}`;
          if (i % 7 === 3) {
            // A client that gave up waiting and retried on the other process while the first was running.
            const [first, second] = await Promise.all([
              send(api(i).httpUrl, sender.secret, body(i), key).then(accepted),
              send(api(i + 1).httpUrl, sender.secret, body(i), key).then(accepted),
            ]);
            expect(second.id).toBe(first.id);
            expect([first.replayed, second.replayed].sort()).toEqual([false, true]);
            ids.set(i, first.id);
            return;
          }
          const first = await accepted(await send(api(i).httpUrl, sender.secret, body(i), key));
          expect(first.replayed).toBe(false);
          ids.set(i, first.id);
          if (i % 4 === 1) {
            // A retry after a lost answer, to the other process.
            retries.push(
              send(api(i + 1).httpUrl, sender.secret, body(i), key)
                .then(accepted)
                .then((again) => {
                  expect(again).toMatchObject({ id: first.id, replayed: true });
                }),
            );
          }
        }),
      );
    }
    await Promise.all(retries);
    expect(new Set(ids.values()).size).toBe(MESSAGES);

    // ---- email-service events: a complaint report, delivered to both API processes at once
    const reported = [...ids].filter(([i]) => "reported" in kindOf(i));
    const statusOf = async (id: string): Promise<string> => {
      const { rows } = await db.query<{ status: string }>("select status from message where company_id = $1 and id = $2", [sender.companyId, id]);
      return rows[0]?.status ?? "missing";
    };
    for (const [, id] of reported) await eventually(() => statusOf(id), (status) => status === "delivered", 60_000, `message ${id} delivered`);
    for (const [i, id] of reported) {
      const { rows } = await db.query<{ provider_message_id: string }>("select provider_message_id from message where id = $1", [id]);
      const report = {
        providerEventId: `fbl-${i}-${randomBytes(3).toString("hex")}`,
        providerMessageId: rows[0]?.provider_message_id ?? "",
        type: "complained",
        occurredAt: timestampFromDate(new Date()),
      };
      const answers = await Promise.all(apis.map((a) => a.admin.reportProviderEvent(report)));
      expect(answers.map((answer) => answer.messageId)).toEqual([id, id]);
      // Recorded once (checked below), and applied by exactly one of the two reports, whichever recorded it.
      expect(answers.map((answer) => answer.applied).sort()).toEqual([false, true]);
    }

    // ---- every message at its final status
    await eventually(
      async () => {
        const { rows } = await db.query<{ id: string; status: string }>("select id, status from message where company_id = $1", [sender.companyId]);
        return new Map(rows.map((row) => [row.id, row.status]));
      },
      (statuses) => [...ids].every(([i, id]) => statuses.get(id) === kindOf(i).final),
      90_000,
      "every message at its final status",
    );
    const { rows: messages } = await db.query<{ id: string; idempotency_key: string; status: string }>(
      "select id, idempotency_key, status from message where company_id = $1",
      [sender.companyId],
    );
    expect(messages).toHaveLength(MESSAGES);
    expect(new Set(messages.map((m) => m.idempotency_key)).size).toBe(MESSAGES);

    // ---- handed to the email service once each: the simulator's journal, and one `sent` event
    const handoffs = await db.query<{ message_id: string; outcome: string }>(
      "select message_id::text, outcome from simulator_handoff where message_id = any($1::uuid[])",
      [[...ids.values()]],
    );
    expect(handoffs.rows).toHaveLength(MESSAGES);
    const rejected = [...ids.keys()].filter((i) => kindOf(i).final === "rejected").length;
    expect(handoffs.rows.filter((h) => h.outcome === "rejected")).toHaveLength(rejected);
    const sentEvents = await db.query<{ message_id: string; n: string }>(
      "select message_id::text, count(*) as n from message_event where company_id = $1 and type = 'sent' group by message_id",
      [sender.companyId],
    );
    expect(sentEvents.rows).toHaveLength(MESSAGES - rejected);
    expect(sentEvents.rows.filter((row) => Number(row.n) !== 1)).toEqual([]);

    // ---- each provider event recorded once: the simulator's (reported by whichever process polled first) and the reports
    const simulatorEvents = await db.query<{ provider_event_id: string; done: boolean }>(
      `select e.provider_event_id, e.done_at is not null as done
         from simulator_event e join message m on m.provider_message_id = e.provider_message_id
        where m.company_id = $1`,
      [sender.companyId],
    );
    const expectedEvents = [...ids.keys()].reduce((sum, i) => sum + kindOf(i).events.length, 0);
    expect(simulatorEvents.rows).toHaveLength(expectedEvents);
    expect(simulatorEvents.rows.filter((row) => !row.done)).toEqual([]);
    const recorded = await db.query<{ provider_event_id: string; n: string }>(
      `select provider_event_id, count(*) as n from message_event
        where company_id = $1 and provider_event_id is not null group by provider_event_id`,
      [sender.companyId],
    );
    expect(recorded.rows).toHaveLength(expectedEvents + reported.length);
    expect(recorded.rows.filter((row) => Number(row.n) !== 1)).toEqual([]);

    // ---- credits: charged once per message handed off, refunded once per rejection
    const ledger = await db.query<{ reason: string; n: string; messages: string }>(
      `select reason, count(*) as n, count(distinct message_id) as messages from credit_ledger
        where company_id = $1 and message_id is not null group by reason`,
      [sender.companyId],
    );
    const byReason = Object.fromEntries(ledger.rows.map((row) => [row.reason, { n: Number(row.n), messages: Number(row.messages) }]));
    expect(byReason.charge).toEqual({ n: MESSAGES, messages: MESSAGES });
    expect(byReason.refund).toEqual({ n: rejected, messages: rejected });
    const { balance } = await operatorClient((apis[1] as ApiProcess).operatorUrl, CreditsService, sender.companyId).getCredits({});
    expect(Number(balance)).toBe(CREDITS - (MESSAGES - rejected));

    // ---- both API processes took sends, both workers handed messages off
    for (const [n, a] of apis.entries()) {
      const text = await scrape(a.operatorUrl);
      expect(sample(text, "mail_http_requests_total", { route: "/mail/v1/send", status: "202" }), `API ${n + 1}`).toBeGreaterThan(0);
    }
    const handedOffBy = await Promise.all(
      workers.map(async (worker) => sample(await scrape(worker.url), "mail_worker_activities_total", { activity: "attemptHandOff", outcome: "completed" })),
    );
    for (const [n, count] of handedOffBy.entries()) expect(count, `worker ${n + 1}`).toBeGreaterThan(0);
    expect(handedOffBy.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(MESSAGES);
    for (const worker of workers) expect(sample(await scrape(worker.sdkMetricsUrl), "temporal_request")).toBeGreaterThan(0);

    // ---- PostgreSQL connections: never more than the documented count (pools plus the LISTEN feeds)
    const most = await connections.stop();
    expect(most).toBeLessThanOrEqual(MOST_CONNECTIONS);
    // The stream filled the pools: the count was approached, not met by idle processes.
    expect(most).toBeGreaterThan(MOST_CONNECTIONS / 2);
  });

  it("loads the Temporal worker SDK (its native core) in the workers only", async () => {
    // The worker SDK's Rust core is a shared library: a process that loaded it maps the file.
    const mapsCore = async (pid: number | undefined): Promise<boolean> => (await readFile(`/proc/${pid}/maps`, "utf8")).includes("@temporalio/core-bridge");
    for (const [n, a] of apis.entries()) expect(await mapsCore(a.process.child.pid), `API ${n + 1}`).toBe(false);
    for (const [n, worker] of workers.entries()) expect(await mapsCore(worker.process.child.pid), `worker ${n + 1}`).toBe(true);
  });

  it("stops every process gracefully at SIGTERM", async () => {
    const codes = await Promise.all([...apis, ...workers].map((p) => p.process.stop()));
    expect(codes).toEqual([0, 0, 0, 0]);
    for (const p of [...apis, ...workers]) expect(jsonLines(p.process.output(), /^shutdown: drained in \d+ ms$/)).toHaveLength(1);
  });
});
