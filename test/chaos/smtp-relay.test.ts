import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceChild } from "./service-child.ts";
import { SendStream } from "./send-stream.ts";
import { type SinkTransaction, type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts";
import { copiesByMessageId, inFlightAt, type Kill, killInTransaction, type RelayWorkers, takeovers } from "./relay-kills.ts";
import { type ChaosStack, createSendingCompany, queryOnce, startChaosStack } from "./stack.ts";

/**
 * The relay chaos run (`npm run test:chaos`, docs/chaos.md): "never lost,
 * never sent twice" counted where the mail arrives, with EMAIL_PROVIDER=smtp
 * against a real SMTP server (test/support/smtp-sink.ts) that keeps every message it
 * received with its Message-ID.
 *
 * An API process and two worker processes (each announcing its own EHLO
 * name, so the sink knows who sent what) under a steady stream of sends
 * with client retries. The sink answers every 4th message 1.5 s after its
 * final "."; twice, the worker that has such a transaction open is
 * SIGKILLed in the middle of it, and started again a second later.
 *
 * What SMTP can and cannot guarantee: a relay that has the whole message
 * queues it before it answers, so a sender that dies before it read (and
 * recorded) the 250 cannot know whether the relay has it, and must send
 * again or risk losing it. A second copy is therefore allowed only for a
 * message whose transaction was in flight at a kill: not yet answered, or
 * answered less than RECORD_GRACE_MS before it (the time the dead worker
 * had to record the answer). Any other second copy is a failure, as is any
 * accepted message that never reached the sink.
 *
 * Also measured: the takeover time, from the SIGKILL to the moment the
 * other worker sent the killed worker's open transactions again (the
 * handoff activity's heartbeat timeout and its retry backoff).
 */

const CREDITS = 100_000;
const MESSAGE_ID_DOMAIN = "relay.chaos.example";
const SLOW_EVERY = 4;
const SLOW_MS = 1_500;
const PROGRESS_TIMEOUT_MS = 120_000;
const SETTLE_TIMEOUT_MS = 120_000;
const BACKLOG_MESSAGES = 30;
const WORKERS = ["worker-a", "worker-b"] as const;

let stack: ChaosStack;
let keep = false;
let sink: SmtpSink;
let api: ServiceChild;
const workers = new Map<string, ServiceChild>();
let stream: SendStream | undefined;
const started = Date.now();

const note = (what: string): void => stack.note(what);
const ehloOf = (worker: string): string => `${worker}.chaos.example`;

function assertChildrenAlive(): void {
  for (const child of [api, ...workers.values()]) {
    if (child.unexpectedExits.length > 0) throw new Error(`${child.name} exited on its own (${child.unexpectedExits.join(", ")}); log: ${child.logFile}`);
  }
}

async function sentMessages(companyId: string): Promise<number | undefined> {
  const rows = await queryOnce<{ n: number }>(stack.postgres, `select count(*)::int as n from message where company_id = $1 and status = 'sent'`, [companyId]);
  return rows?.[0]?.n;
}

async function waitForProgress(companyId: string, what: string, count: number): Promise<void> {
  const deadline = Date.now() + PROGRESS_TIMEOUT_MS;
  const baseline = (await sentMessages(companyId)) ?? 0;
  for (;;) {
    assertChildrenAlive();
    const now = (await sentMessages(companyId)) ?? 0;
    if (now >= baseline + count) return note(`${what}: ${count} more messages sent (${now} in all, ${stream?.accepted ?? 0} accepted)`);
    if (Date.now() > deadline) throw new Error(`${what}: fewer than ${count} messages sent within ${PROGRESS_TIMEOUT_MS} ms (${now}, from ${baseline}); logs: ${stack.root}`);
    await sleep(250);
  }
}

const relay = (): RelayWorkers => ({ sink, workers, ehloOf, slowMs: SLOW_MS, assertAlive: assertChildrenAlive });

beforeAll(async () => {
  stack = await startChaosStack("relay-chaos");
  sink = await startSmtpSink({ slowEvery: SLOW_EVERY, slowMs: SLOW_MS });
  [stack.postgres, stack.temporal] = await Promise.all([stack.startPostgres(), stack.startTemporal()]);
  note(`PostgreSQL on ${stack.ports.pg}, Temporal on ${stack.ports.temporal}, SMTP sink on ${sink.port}; logs in ${stack.root}`);
  const env: NodeJS.ProcessEnv = {
    ...stack.serviceEnv(),
    EMAIL_PROVIDER: "smtp",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(sink.port),
    MESSAGE_ID_DOMAIN,
    // An attempt may take 10 s (the SMTP deadline is half of it): far more than the sink's slow answers.
    HANDOFF_TIMEOUT_SECONDS: "20",
  };
  api = new ServiceChild("api", { env, caFile: stack.caFile, logDir: stack.root });
  for (const name of WORKERS) workers.set(name, new ServiceChild("worker", { env: { ...env, SMTP_EHLO_NAME: ehloOf(name) }, caFile: stack.caFile, logDir: stack.root, name }));
  await Promise.all([api.start(), ...[...workers.values()].map((w) => w.start())]);
  note("API and two worker processes ready");
}, 300_000);

afterAll(async () => {
  await stream?.stop();
  await api?.close();
  for (const worker of workers.values()) await worker.close();
  await sink?.close();
  await stack?.close(keep);
}, 120_000);

describe("relay chaos: workers killed in the middle of SMTP transactions", () => {
  it("every accepted message reaches the relay, and a second copy only for a transaction in flight at a kill", async () => {
    keep = true;
    const { companyId, secret } = await createSendingCompany(stack.ports.operator, CREDITS);
    let backlogOk = true;
    let watching = true;
    void (async () => {
      while (watching) {
        const rows = await queryOnce<{ n: number }>(stack.postgres, `select count(*)::int as n from message where company_id = $1 and status not in ('sent', 'rejected', 'failed', 'suppressed')`, [companyId]);
        if (rows?.[0]) backlogOk = rows[0].n < BACKLOG_MESSAGES;
        await sleep(300);
      }
    })();
    stream = new SendStream({ baseUrl: `http://127.0.0.1:${stack.ports.http}`, secret, lanes: 3, pauseMs: 20, seed: 23, giveUpMs: 120_000, mayStartNext: () => backlogOk });
    stream.start();
    note("stream of sends started");
    await waitForProgress(companyId, "warm-up", 20);

    const kills: Kill[] = [];
    for (const prefer of WORKERS) {
      const kill = await killInTransaction(relay(), prefer, kills);
      kills.push(kill);
      note(`${kill.worker}: SIGKILL with ${kill.open.length} SMTP transaction(s) unanswered (${kill.open.filter((t) => t.slow).length} held by the sink)`);
      await sleep(1_000);
      await workers.get(kill.worker)?.start();
      note(`${kill.worker}: started again`);
      await waitForProgress(companyId, `after ${kill.worker}'s kill`, 20);
    }

    await stream.stop();
    watching = false;
    note(`stream stopped: ${stream.records.length} sends, ${stream.accepted} accepted`);
    const settleBy = Date.now() + SETTLE_TIMEOUT_MS;
    let open = Number.POSITIVE_INFINITY;
    while (open > 0 && Date.now() < settleBy) {
      const rows = await queryOnce<{ n: number }>(stack.postgres, `select count(*)::int as n from message where company_id = $1 and status <> 'sent'`, [companyId]);
      open = rows?.[0]?.n ?? open;
      if (open > 0) await sleep(500);
    }
    note(open === 0 ? "settled: every message sent" : `not settled: ${open} messages not sent`);

    // --- The books, at the sink.
    const problems: string[] = [];
    const accepted = stream.records.filter((r) => r.accepted).map((r) => [...r.ids][0] ?? "");
    const expected = new Set(accepted.map((id) => `${id}@${MESSAGE_ID_DOMAIN}`));
    const copies = copiesByMessageId(sink);
    const lost = [...expected].filter((id) => !copies.has(id));
    if (lost.length > 0) problems.push(`accepted messages the relay never received: ${lost.slice(0, 5).join(", ")} (${lost.length})`);
    const unasked = [...copies.keys()].filter((id) => !expected.has(id));
    if (unasked.length > 0) problems.push(`messages at the relay nobody asked for: ${unasked.slice(0, 5).join(", ")} (${unasked.length})`);
    if (stream.records.some((r) => r.failure !== undefined)) problems.push(`sends without a 202: ${stream.records.filter((r) => r.failure).map((r) => `${r.key}: ${r.failure}`).slice(0, 3).join("; ")}`);

    // Each second copy must go back to a transaction in flight at a kill.
    const inFlight = (first: SinkTransaction): Kill | undefined => inFlightAt(kills, ehloOf, first);
    const twice = [...copies.entries()].filter(([, list]) => list.length > 1);
    const explained: string[] = [];
    for (const [messageId, list] of twice) {
      const first = list[0] as SinkTransaction;
      const kill = inFlight(first);
      const answered = first.answeredAt === undefined ? "never answered" : `answered ${kill ? first.answeredAt - kill.at : "?"} ms from the kill`;
      if (kill) explained.push(`${messageId} (${answered})`);
      else {
        const nearest = kills.map((k) => (first.answeredAt ?? first.dataAt) - k.at).sort((a, b) => Math.abs(a) - Math.abs(b))[0];
        problems.push(`${messageId} received ${list.length} times; its first copy was answered ${first.answeredAt === undefined ? "never" : `${nearest} ms from the nearest kill`} by ${first.client}`);
      }
    }

    // Takeover: from the kill to the second copy of each transaction that was open at it.
    const takeover = takeovers(kills, copies);
    const charges = await queryOnce<{ n: number; messages: number }>(
      stack.postgres,
      `select count(*)::int as n, count(distinct message_id)::int as messages from credit_ledger where company_id = $1 and reason = 'charge'`,
      [companyId],
    );

    const counts: Record<string, string | number> = {
      "sends (idempotency keys)": stream.records.length,
      "send requests": stream.records.reduce((n, r) => n + r.requests, 0),
      "accepted (202)": accepted.length,
      "SMTP transactions at the sink": sink.transactions.length,
      "distinct Message-IDs at the sink": copies.size,
      "accepted messages never received": lost.length,
      "messages received twice or more": twice.length,
      "  of which in flight at a kill": explained.length,
      "transactions open at the kills": kills.map((k) => `${k.worker} ${k.open.length}`).join(", "),
      "takeover, SIGKILL to the copy sent again (s)": takeover.map((ms) => (ms / 1000).toFixed(1)).join(", ") || "none",
      "credit charges (messages)": `${charges?.[0]?.n ?? "?"} (${charges?.[0]?.messages ?? "?"})`,
      "run time": `${Math.round((Date.now() - started) / 1000)} s`,
    };
    const width = Math.max(...Object.keys(counts).map((k) => k.length));
    console.log(
      [
        "",
        "Relay chaos run: counts",
        ...Object.entries(counts).map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
        ...(explained.length > 0 ? ["", "Second copies (in flight at a kill)", ...explained.map((e) => `  ${e}`)] : []),
        "",
        "Timeline",
        ...stack.timeline.map((t) => `  ${t}`),
        "",
      ].join("\n"),
    );

    expect({ open, problems }).toEqual({ open: 0, problems: [] });
    // The run did what it claims: each kill cut off a transaction the sink held.
    expect(kills.every((k) => k.open.some((t) => t.slow))).toBe(true);
    expect(charges?.[0]?.n).toBe(accepted.length);
    keep = false;
  }, 900_000);
});
