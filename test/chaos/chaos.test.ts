import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorClient } from "../support/api-harness.ts";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { HOOK_HOST } from "../webhooks/api-support.ts";
import { audit, FINAL_STATUSES } from "./audit.ts";
import { type ChaosReceiver, startChaosReceiver } from "./receiver.ts";
import { SendStream } from "./send-stream.ts";
import { ServiceChild } from "./service-child.ts";
import { type ChaosStack, createSendingCompany, queryOnce, startChaosStack } from "./stack.ts";

/**
 * The chaos suite (`npm run test:chaos`): the service as deployed (an API
 * process and a worker process, each a child process, on a PostgreSQL and
 * a Temporal server of their own that keep their data across restarts),
 * a steady stream of sends with idempotency keys and client retries, the
 * resulting webhook deliveries to an HTTPS receiver, and, while all that
 * runs, one failure after another:
 *
 *   1. the worker process SIGKILLed in the middle of a handoff (the
 *      provider has the message, our side has not recorded it), then
 *      started again;
 *   2. the API process SIGKILLed with a send in flight, then started again;
 *   3. the Temporal server stopped, then started again on its state file;
 *   4. PostgreSQL shut down immediately (as in a crash: no checkpoint,
 *      crash recovery at the next start), then started again;
 *   5. the receiver hanging (no answer), then failing (500), then recovering.
 *
 * After each, the suite waits until messages are being finished again.
 * Then the stream stops, everything settles, and the books are audited
 * (./audit.ts) and printed: every accepted message reached its final
 * status exactly once, one provider handoff and one charge each, no client
 * retry made a second message, every webhook delivery succeeded or is a
 * dead letter with its attempts recorded. See docs/chaos.md.
 */

const SUBSCRIBED = ["sent", "delivered", "bounced", "failed"] as const;
const CREDITS = 100_000;
const PROGRESS_TIMEOUT_MS = 120_000;
/** The stream holds back while this many messages are not final yet (or deliveries not settled, see BACKLOG_DELIVERIES). */
const BACKLOG_MESSAGES = 30;
const BACKLOG_DELIVERIES = 30;
const SETTLE_TIMEOUT_MS = 180_000;
/** Longer than any retry wait of the service's parts (activity backoff, provider event retries, relays). */
const STUCK_AFTER_MS = 75_000;

let stack: ChaosStack;
let keepRoot = false;
let receiver: ChaosReceiver;
let api: ServiceChild;
let worker: ServiceChild;
let stream: SendStream | undefined;
const started = Date.now();

const note = (what: string): void => stack.note(what);
const tryQuery = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[] | undefined> => queryOnce<R>(stack.postgres, text, values);

async function finishedMessages(companyId: string): Promise<number | undefined> {
  const rows = await tryQuery<{ n: number }>(`select count(*)::int as n from message where company_id = $1 and status = any($2::text[])`, [
    companyId,
    [...FINAL_STATUSES],
  ]);
  return rows?.[0]?.n;
}

/**
 * Waits (at most 60 s) until a message is in the middle of its handoff:
 * journaled by the simulator (the provider has it) but still `processing`
 * on our side. SIMULATOR_HANDOFF_DELAY_MS keeps each one there for 2 s.
 * Answers how many there are (0 when none was seen in time).
 */
async function handoffInFlight(companyId: string): Promise<number> {
  if (!stack.postgres) return 0;
  const client = new pg.Client({ connectionString: stack.postgres.url });
  await client.connect();
  try {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from message m join simulator_handoff h on h.message_id = m.id
          where m.company_id = $1 and m.status = 'processing'`,
        [companyId],
      );
      if ((rows[0]?.n ?? 0) > 0) return rows[0]?.n ?? 0;
      await sleep(20);
    }
    return 0;
  } finally {
    await client.end();
  }
}

/** Waits (at most 60 s) until the stream has a request in flight; answers how many. */
async function sendsInFlight(sends: SendStream): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (sends.inFlight === 0 && Date.now() < deadline) await sleep(5);
  return sends.inFlight;
}

/** What the worker has under way, for the timeline. */
async function underWay(companyId: string): Promise<string> {
  const rows = await tryQuery<{ processing: number; attempting: number }>(
    `select
       (select count(*)::int from message where company_id = $1 and status = 'processing') as processing,
       (select count(*)::int from webhook_delivery where company_id = $1 and state in ('pending', 'attempting')) as attempting`,
    [companyId],
  );
  const row = rows?.[0];
  return row ? `${row.processing} messages in handoff, ${row.attempting} deliveries under way` : "database away";
}

async function deadLetters(companyId: string): Promise<number | undefined> {
  const rows = await tryQuery<{ n: number }>(`select count(*)::int as n from webhook_delivery where company_id = $1 and state = 'dead_letter'`, [companyId]);
  return rows?.[0]?.n;
}

/** Polls `probe` until it holds, at most PROGRESS_TIMEOUT_MS. */
async function waitFor(probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + PROGRESS_TIMEOUT_MS;
  while (!(await probe())) {
    assertChildrenAlive();
    if (Date.now() > deadline) throw new Error(`timed out after ${PROGRESS_TIMEOUT_MS} ms waiting for ${what}\n${await diagnosis()}`);
    await sleep(250);
  }
}

/**
 * Polls how much work is under way, for the stream's back-pressure. While
 * PostgreSQL is away the last answer stands.
 */
function watchBacklog(companyId: string): { readonly ok: () => boolean; stop(): void } {
  let ok = true;
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const rows = await tryQuery<{ messages: number; deliveries: number }>(
        `select
           (select count(*)::int from message where company_id = $1 and not (status = any($2::text[]))) as messages,
           (select count(*)::int from webhook_delivery where company_id = $1 and state not in ('succeeded', 'dead_letter')) as deliveries`,
        [companyId, [...FINAL_STATUSES]],
      );
      const open = rows?.[0];
      if (open) ok = open.messages < BACKLOG_MESSAGES && open.deliveries < BACKLOG_DELIVERIES;
      await sleep(300);
    }
  })();
  return { ok: () => ok, stop: () => void (stopped = true) };
}

/** Why the service may be unable to make progress, for failure messages. */
async function diagnosis(): Promise<string> {
  const parts: string[] = [];
  for (const child of [api, worker]) {
    if (child.unexpectedExits.length > 0) parts.push(`${child.role} exited on its own: ${child.unexpectedExits.join(", ")}\n${await child.tail()}`);
  }
  return [`timeline:\n${stack.timeline.join("\n")}`, ...parts, `logs: ${stack.root}`].join("\n\n");
}

function assertChildrenAlive(): void {
  for (const child of [api, worker]) {
    if (child.unexpectedExits.length > 0) throw new Error(`${child.role} exited on its own (${child.unexpectedExits.join(", ")}); log: ${child.logFile}`);
  }
}

/** Waits until `count` more messages reached a final status than at the call. */
async function waitForProgress(companyId: string, what: string, count: number): Promise<void> {
  let baseline: number | undefined;
  const deadline = Date.now() + PROGRESS_TIMEOUT_MS;
  for (;;) {
    assertChildrenAlive();
    const now = await finishedMessages(companyId);
    if (now !== undefined) {
      baseline ??= now;
      if (now >= baseline + count) {
        note(`${what}: ${count} more messages finished (${now} in all, ${stream?.accepted ?? 0} accepted)`);
        return;
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: fewer than ${count} messages finished within ${PROGRESS_TIMEOUT_MS} ms (${now ?? "database away"}, from ${baseline ?? "?"})\n${await diagnosis()}`);
    }
    await sleep(250);
  }
}

/**
 * Waits until nothing is under way: every message final, every event
 * fanned out, every delivery settled, every outcome reported. Gives up
 * after SETTLE_TIMEOUT_MS, or once nothing changed for STUCK_AFTER_MS
 * (what is left then is stuck, not slow). Answers why it gave up.
 */
async function waitUntilSettled(companyId: string): Promise<string | undefined> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let last = "";
  let lastChange = Date.now();
  for (;;) {
    assertChildrenAlive();
    const rows = await tryQuery<{ messages: number; events: number; deliveries: number; outcomes: number }>(
      `select
         (select count(*)::int from message where company_id = $1 and not (status = any($2::text[]))) as messages,
         (select count(*)::int from webhook_event where company_id = $1 and fanned_out_at is null) as events,
         (select count(*)::int from webhook_delivery where company_id = $1 and state not in ('succeeded', 'dead_letter')) as deliveries,
         (select count(*)::int from simulator_event where done_at is null) as outcomes`,
      [companyId, [...FINAL_STATUSES]],
    );
    const open = rows?.[0];
    if (open) {
      const now = `${open.messages} messages not final, ${open.events} webhook events not fanned out, ${open.deliveries} deliveries under way, ${open.outcomes} provider outcomes not reported`;
      if (now !== last) lastChange = Date.now();
      last = now;
      if (open.messages + open.events + open.deliveries + open.outcomes === 0) return undefined;
    }
    if (Date.now() - lastChange > STUCK_AFTER_MS) return `stuck (no change for ${STUCK_AFTER_MS} ms): ${last}`;
    if (Date.now() > deadline) return `not settled within ${SETTLE_TIMEOUT_MS} ms: ${last}`;
    await sleep(1_000);
  }
}

beforeAll(async () => {
  stack = await startChaosStack("chaos");
  receiver = await startChaosReceiver(stack.certificate);
  [stack.postgres, stack.temporal] = await Promise.all([stack.startPostgres(), stack.startTemporal()]);
  note(`PostgreSQL on ${stack.ports.pg}, Temporal on ${stack.ports.temporal}, receiver on ${receiver.port}; logs in ${stack.root}`);

  const env: NodeJS.ProcessEnv = {
    ...stack.serviceEnv(),
    // A handoff cut off by a killed worker is retried elsewhere after this long.
    HANDOFF_TIMEOUT_SECONDS: "5",
  };
  api = new ServiceChild("api", { env, caFile: stack.caFile, logDir: stack.root });
  worker = new ServiceChild("worker", { env, caFile: stack.caFile, logDir: stack.root });
  // Together: both apply the migrations at start, one after the other under an advisory lock.
  // The first worker's handoffs answer 2 s after the simulator journaled
  // them, so its SIGKILL surely cuts one off in that window (taken by the
  // provider, not yet recorded by us): the retry must neither send nor
  // charge again, and the outcome the provider reports meanwhile must not be lost.
  await Promise.all([api.start(), worker.start({ SIMULATOR_HANDOFF_DELAY_MS: "2000" })]);
  note("API and worker processes ready");
}, 300_000);

afterAll(async () => {
  await stream?.stop();
  await api?.close();
  await worker?.close();
  await receiver?.close();
  await stack?.close(keepRoot);
}, 120_000);

describe("chaos: crashes and outages under a steady stream of sends and webhook deliveries", () => {
  it("loses nothing and doubles nothing", async () => {
    keepRoot = true;
    const { ports } = stack;
    const { companyId, secret } = await createSendingCompany(ports.operator, CREDITS);
    const { endpoint } = await operatorClient(`http://127.0.0.1:${ports.operator}`, WebhooksService, companyId).createWebhookEndpoint({
      url: `https://${HOOK_HOST}:${receiver.port}/hooks`,
      events: [...SUBSCRIBED],
    });
    const endpointId = endpoint?.id ?? "";

    const backlog = watchBacklog(companyId);
    stream = new SendStream({
      baseUrl: `http://127.0.0.1:${ports.http}`,
      secret,
      lanes: 2,
      pauseMs: 100,
      seed: 11,
      giveUpMs: 120_000,
      mayStartNext: backlog.ok,
    });
    stream.start();
    note("stream of sends started");
    await waitForProgress(companyId, "warm-up", 20);

    // The worst moment: the provider took a message, our side has not recorded it yet.
    const caught = await handoffInFlight(companyId);
    await worker.kill();
    note(`worker: SIGKILL with ${caught} message(s) taken by the provider and not yet recorded as sent (${await underWay(companyId)})`);
    await sleep(1_000);
    await worker.start();
    note("worker: started again");
    await waitForProgress(companyId, "after the worker's restart", 15);

    // With requests in flight, so some are cut off before their answer (their idempotency claims stay behind).
    const cutOff = await sendsInFlight(stream);
    await api.kill();
    note(`API: SIGKILL with ${cutOff} send request(s) in flight`);
    await sleep(1_000);
    await api.start();
    note("API: started again");
    await waitForProgress(companyId, "after the API's restart", 15);

    note("Temporal: stopping");
    await stack.temporal?.stop();
    stack.temporal = undefined;
    await sleep(1_000);
    stack.temporal = await stack.startTemporal();
    note("Temporal: started again on its state file");
    await waitForProgress(companyId, "after Temporal's restart", 15);

    note("PostgreSQL: immediate shutdown");
    await stack.postgres?.crash();
    stack.postgres = undefined;
    await sleep(1_000);
    stack.postgres = await stack.startPostgres();
    note("PostgreSQL: started again (crash recovery)");
    await waitForProgress(companyId, "after PostgreSQL's restart", 15);

    // The receiver's bad spell lasts until it showed: attempts cut off by
    // the sender's timeout, then enough failed attempts that deliveries
    // ran out of them (dead letters), however fast this machine is.
    receiver.mode = "hang";
    note("receiver: hanging");
    await sleep(6_000);
    await waitFor(async () => receiver.receipts.filter((r) => r.mode === "hang").length >= 3, "3 requests held by the hanging receiver");
    receiver.mode = "fail";
    note("receiver: answering 500");
    await waitFor(async () => ((await deadLetters(companyId)) ?? 0) >= 2, "2 deliveries dead-lettered by the failing receiver");
    receiver.mode = "ok";
    note(`receiver: answering 200 again (${await deadLetters(companyId)} dead letters)`);
    await waitForProgress(companyId, "after the receiver recovered", 15);

    await stream.stop();
    backlog.stop();
    note(`stream stopped: ${stream.records.length} sends, ${stream.accepted} accepted`);
    const unsettled = await waitUntilSettled(companyId);
    note(unsettled ?? "settled: nothing under way");

    const pgUrl = stack.postgres.url;
    const result = await audit({
      databaseUrl: pgUrl,
      companyId,
      endpointIds: [endpointId],
      subscribed: SUBSCRIBED,
      creditsGranted: CREDITS,
      records: stream.records,
      receiver,
    });
    const counts = {
      ...result.counts,
      "client retries by reason": [...stream.retryReasons.entries()].map(([k, v]) => `${k} ${v}`).join(", "),
      "worker / API process starts": `${worker.starts} / ${api.starts}`,
      "run time": `${Math.round((Date.now() - started) / 1000)} s`,
    };
    const width = Math.max(...Object.keys(counts).map((k) => k.length));
    console.log(
      ["", "Chaos run: counts", ...Object.entries(counts).map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), "", "Timeline", ...stack.timeline.map((t) => `  ${t}`), ""].join("\n"),
    );

    if (unsettled !== undefined || result.problems.length > 0) console.log(await diagnosis());
    expect({ unsettled, problems: result.problems }).toEqual({ unsettled: undefined, problems: [] });
    // The run did exercise what it claims to: both webhook outcomes, client retries, replays.
    expect(caught, "the worker's SIGKILL caught a handoff in flight").toBeGreaterThan(0);
    expect(cutOff, "the API's SIGKILL caught a send in flight").toBeGreaterThan(0);
    expect(result.counts["deliveries dead-lettered"]).toBeGreaterThan(0);
    expect(result.counts["deliveries succeeded"]).toBeGreaterThan(0);
    expect(result.counts["client retries after an error or timeout"]).toBeGreaterThan(0);
    expect(result.counts["answers with replayed: true"]).toBeGreaterThan(0);
    keepRoot = false;
  }, 900_000);
});
