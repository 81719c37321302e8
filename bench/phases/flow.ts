/**
 * What happens after the 202, with the API process and a worker process on
 * one task queue (each a process of its own):
 *
 * - end to end: a batch of sends (32 at a time) until every message is
 *   `sent`, and until every one is `delivered` (simulator), against the
 *   rate at which the same Temporal server completes a workflow with one
 *   empty activity (bench/baselines/empty-workflow.ts);
 * - webhooks: a batch of events written to the outbox at once, until every
 *   delivery succeeded at a local HTTPS receiver, against the empty
 *   workflow + activity measured in the same run (the ceiling of a workflow
 *   per delivery), with the same signed bodies posted by a bare loop
 *   (bench/baselines/bare-webhook-loop.ts) beside it for reference;
 *   and events published one by one through the EventsService, from the
 *   event's record to its first attempt at the receiver, against one post
 *   of the bare loop;
 * - the peak RSS of the API process, of the worker, and of the baseline
 *   worker.
 */
import path from "node:path";
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Client as TemporalClient, Connection } from "@temporalio/client";
import pg from "pg";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import type { HttpsReceiver } from "../../test/adapters/http/https-receiver.ts";
import { type Child, startChild } from "../lib/processes.ts";
import type { Figures } from "../lib/report.ts";
import { type BenchCompany, OPERATOR_TOKEN, setupCompany, startApi, startWorker, type WebhookReceiverAccess } from "../lib/service.ts";
import type { BenchSettings } from "../lib/settings.ts";
import { percentile } from "../lib/stats.ts";
import { describeCost, openWorkflows, someWorkflowIds, temporalCost } from "../lib/temporal-cost.ts";
import { createBenchEndpoint } from "../lib/webhook-endpoint.ts";
import { SEND_BODY } from "./api-load.ts";

const webhookWorkflowId = (deliveryId: string): string => `webhook-delivery-${deliveryId}`;
const EMPTY_WORKFLOW = path.join(import.meta.dirname, "..", "baselines", "empty-workflow.ts");
const BARE_WEBHOOK_LOOP = path.join(import.meta.dirname, "..", "baselines", "bare-webhook-loop.ts");
const CREDITS = 10_000_000;
/** The worker's activity slots: WORKER_POOL_MAX (default 10) - 2, as src/wiring/worker.ts sets them. */
const WORKER_ACTIVITIES = 8;
/** A batch that has not finished by then is reported as failed rather than waited for. */
const BATCH_TIMEOUT_MS = 300_000;
const E2E_TARGET = { ratio: 0.7 };
/** Issue 22, item 3: deliveries/s against the empty workflow + activity (a workflow per delivery), and event to first attempt with the service idle. */
const WEBHOOK_RATE_TARGET = { ratio: 0.85 };
const WEBHOOK_DELAY_P50_TARGET = { atMost: 25 };
const WEBHOOK_DELAY_P95_TARGET = { atMost: 60 };
const ORDER = { number: 1001, total: "49.90", currency: "EUR", lines: [{ sku: "A-1", quantity: 2 }] };

export interface ReceiverSetup extends WebhookReceiverAccess {
  readonly receiver: HttpsReceiver;
  /** Delivery id -> when its first attempt reached the receiver (Date.now()). */
  readonly firstSeen: Map<string, number>;
}

export interface FlowContext {
  readonly settings: BenchSettings;
  readonly databaseUrl: string;
  readonly temporalAddress: string;
  readonly taskQueue: string;
  readonly receiver: ReceiverSetup;
  readonly figures: Figures;
  readonly print: (line: string) => void;
  /** A company made earlier on this database (the census's), else one is made. */
  readonly company?: BenchCompany;
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + BATCH_TIMEOUT_MS;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${BATCH_TIMEOUT_MS / 1000} s waiting for ${what}`);
    await sleep(50);
  }
}

/** Workflows whose histories are read for the Temporal cost figures (enough for an average, quick to fetch). */
const COST_SAMPLE = 40;
/** Issue 22's targets: billable actions per delivered message, per successful delivery. */
const ACTIONS_PER_MESSAGE_TARGET = 5;
const ACTIONS_PER_DELIVERY_TARGET = 3;

/** `count` sends, `concurrency` at a time; seconds from the first request to every message sent, and to every one delivered. */
export async function endToEnd(db: pg.Client, httpUrl: string, company: BenchCompany, count: number, concurrency: number): Promise<{ sent: number; delivered: number; ids: string[] }> {
  const headers = { authorization: `Bearer ${company.secret}`, "content-type": "application/json" };
  const body = JSON.stringify(SEND_BODY);
  const ids: string[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count; i = next++) {
        const response = await fetch(`${httpUrl}/mail/v1/send`, { method: "POST", headers, body });
        const answer = (await response.json()) as { id?: string };
        if (response.status !== 202 || !answer.id) throw new Error(`POST /mail/v1/send answered ${response.status}: ${JSON.stringify(answer)}`);
        ids.push(answer.id);
      }
    }),
  );
  let sentAt = Number.NaN;
  await waitFor(`${count} messages to be delivered`, async () => {
    const { rows } = await db.query<{ sent: number; delivered: number }>(
      `select count(*) filter (where status in ('sent', 'delivered'))::int as sent, count(*) filter (where status = 'delivered')::int as delivered
         from message where company_id = $1 and id = any($2::uuid[])`,
      [company.companyId, ids],
    );
    const now = performance.now();
    if (Number.isNaN(sentAt) && (rows[0]?.sent ?? 0) >= count) sentAt = now;
    return (rows[0]?.delivered ?? 0) >= count;
  });
  const deliveredAt = performance.now();
  return { sent: (sentAt - started) / 1000, delivered: (deliveredAt - started) / 1000, ids };
}

/** `count` events written to the outbox in one statement; seconds until each one's delivery succeeded, and the deliveries. */
async function webhookBatch(db: pg.Client, companyId: string, count: number): Promise<{ seconds: number; deliveryIds: string[] }> {
  const started = performance.now();
  const { rows } = await db.query<{ id: string }>(
    `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
     select $1, 'order.created', now(), jsonb_build_object('integrationId', 'int_1', 'provider', 'woocommerce', 'order', $2::jsonb), 'bench:' || gen_random_uuid()
       from generate_series(1, $3)
     returning id`,
    [companyId, JSON.stringify(ORDER), count],
  );
  const eventIds = rows.map((row) => row.id);
  let deliveryIds: string[] = [];
  await waitFor(`${count} webhook deliveries`, async () => {
    const done = await db.query<{ id: string }>(`select id from webhook_delivery where state = 'succeeded' and event_id = any($1::uuid[])`, [eventIds]);
    deliveryIds = done.rows.map((row) => row.id);
    return deliveryIds.length >= count;
  });
  return { seconds: (performance.now() - started) / 1000, deliveryIds };
}

/** Where an event's time to first attempt goes, ms from the event's record (p50 over the events). */
interface DelayStages {
  /** The relay's fan-out made the delivery row. */
  readonly fannedOut: number;
  /** The workflow start answered (workflow_started_at). */
  readonly started: number;
  /** The attempt's activity began (attempted_at: after the worker's workflow task and the activity's dispatch). */
  readonly attempting: number;
}

/** Events published one by one through the EventsService; ms from each event's record to its first attempt at the receiver. */
async function webhookDelays(
  db: pg.Client,
  operatorUrl: string,
  companyId: string,
  firstSeen: Map<string, number>,
  count: number,
  pauseMs: number,
): Promise<{ delays: number[]; stages: DelayStages; deliveryIds: string[] }> {
  const operator: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
    return next(request);
  };
  const publisher = createClient(EventsService, createConnectTransport({ baseUrl: operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
  const published: string[] = [];
  for (let i = 0; i < count; i++) {
    const { id } = await publisher.publishEvent({
      companyId,
      eventId: randomUUID(),
      event: "order.created",
      occurredAt: timestampFromDate(new Date()),
      data: { case: "order", value: { integrationId: "int_1", provider: "woocommerce", order: ORDER } },
    });
    published.push(id);
    await sleep(pauseMs);
  }
  let delays: number[] = [];
  let deliveryIds: string[] = [];
  await waitFor(`${count} published events to reach the receiver`, async () => {
    const { rows } = await db.query<{ delivery_id: string; recorded_ms: string }>(
      `select d.id as delivery_id, (extract(epoch from e.created_at) * 1000)::text as recorded_ms
         from webhook_delivery d join webhook_event e on e.id = d.event_id
        where d.event_id = any($1::uuid[])`,
      [published],
    );
    const seen = rows.filter((row) => firstSeen.has(row.delivery_id));
    deliveryIds = seen.map((row) => row.delivery_id);
    delays = seen.map((row) => (firstSeen.get(row.delivery_id) as number) - Number(row.recorded_ms));
    return seen.length >= count;
  });
  const { rows } = await db.query<{ fanned_out: number; started: number; attempting: number }>(
    `select percentile_cont(0.5) within group (order by extract(epoch from d.created_at - e.created_at) * 1000) as fanned_out,
            percentile_cont(0.5) within group (order by extract(epoch from d.workflow_started_at - e.created_at) * 1000) as started,
            percentile_cont(0.5) within group (order by extract(epoch from a.attempted_at - e.created_at) * 1000) as attempting
       from webhook_delivery d
       join webhook_event e on e.id = d.event_id
       join webhook_attempt a on a.delivery_id = d.id and a.number = 1
      where d.event_id = any($1::uuid[])`,
    [published],
  );
  const stages = rows[0] ?? { fanned_out: Number.NaN, started: Number.NaN, attempting: Number.NaN };
  return { delays, stages: { fannedOut: Number(stages.fanned_out), started: Number(stages.started), attempting: Number(stages.attempting) }, deliveryIds };
}

/** Inside Temporal, p50 over the workflows, ms: started -> workflow task started -> completed -> activity started (history event times). */
async function temporalStages(client: TemporalClient, workflowIds: readonly string[]): Promise<string> {
  const steps: Record<string, number[]> = { "to workflow task": [], "workflow task": [], "to activity": [] };
  for (const workflowId of workflowIds) {
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const at = (kind: string): number | undefined => {
      const event = events.find((e) => (e as Record<string, unknown>)[kind] != null);
      const time = event?.eventTime;
      return time ? Number(time.seconds) * 1000 + Math.round((time.nanos ?? 0) / 1e6) : undefined;
    };
    const started = at("workflowExecutionStartedEventAttributes");
    const taskStarted = at("workflowTaskStartedEventAttributes");
    const taskCompleted = at("workflowTaskCompletedEventAttributes");
    const activityStarted = at("activityTaskStartedEventAttributes");
    if (started === undefined || taskStarted === undefined || taskCompleted === undefined) continue;
    steps["to workflow task"]?.push(taskStarted - started);
    steps["workflow task"]?.push(taskCompleted - taskStarted);
    // A local activity attempt runs inside the workflow task: there is no activity to go to.
    if (activityStarted !== undefined) steps["to activity"]?.push(activityStarted - taskCompleted);
  }
  return Object.entries(steps)
    .filter(([name, values]) => values.length > 0 || name !== "to activity")
    .map(([name, values]) => `${name} ${values.length > 0 ? percentile(values, 50).toFixed(0) : "?"} ms`)
    .join(", ");
}

export interface FlowPeaks {
  readonly apiPeakMb: number;
  readonly workerPeakMb: number;
  readonly emptyPeakMb: number;
}

export async function measureFlow(ctx: FlowContext): Promise<FlowPeaks> {
  const { settings, figures, print, receiver } = ctx;
  const service = { databaseUrl: ctx.databaseUrl, temporalAddress: ctx.temporalAddress, taskQueue: ctx.taskQueue, verbose: settings.verbose };
  const children: Child[] = [];
  const peaks = new Map<string, number>();
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  const temporalConnection = await Connection.connect({ address: ctx.temporalAddress });
  const temporalClient = new TemporalClient({ connection: temporalConnection, namespace: "default" });
  try {
    const api = await startApi(service, "api (flow)");
    children.push(api.child);
    const worker = await startWorker(service, receiver, "worker");
    children.push(worker);
    const company = ctx.company ?? (await setupCompany(api.operatorUrl, CREDITS));

    if (settings.phases.has("e2e")) {
      const empty = await startChild({
        name: "empty-workflow baseline",
        script: EMPTY_WORKFLOW,
        env: { ...process.env, TEMPORAL_ADDRESS: ctx.temporalAddress, TASK_QUEUE: `${ctx.taskQueue}-empty`, MAX_ACTIVITIES: String(WORKER_ACTIVITIES) },
        verbose: settings.verbose,
      });
      children.push(empty);
      const n = settings.messages;
      print(`end to end, ${n} messages per batch (${settings.connections} sends at a time)`);
      // Warm-up: JIT, connections, the workers' sticky caches.
      await endToEnd(db, api.httpUrl, company, Math.min(n, 30), settings.connections);
      await empty.call<number>({ batch: Math.min(n, 30), concurrency: settings.connections });
      let lastBatch: string[] = [];
      for (let run = 1; run <= settings.runs; run++) {
        const baseline = await empty.call<number>({ batch: n, concurrency: settings.connections });
        const flow = await endToEnd(db, api.httpUrl, company, n, settings.connections);
        lastBatch = flow.ids;
        print(
          `  run ${run}: service ${(n / flow.sent).toFixed(1)} msg/s to sent, ${(n / flow.delivered).toFixed(1)} msg/s to delivered; ` +
            `empty workflow ${(n / baseline).toFixed(1)} workflows/s`,
        );
        const baselineLabel = "empty workflow + one empty activity, same Temporal";
        figures.add("e2e.sent", { label: "end to end, 202 to sent", unit: "msg/s", better: "higher", baselineLabel, target: E2E_TARGET }, n / flow.sent, n / baseline);
        figures.add("e2e.delivered", { label: "end to end, 202 to delivered", unit: "msg/s", better: "higher", baselineLabel }, n / flow.delivered, n / baseline);
      }
      peaks.set("empty", await empty.stop());

      // What Temporal recorded for the last batch's messages (every one delivered), beside the empty workflow's.
      const messageCost = await temporalCost(temporalClient, lastBatch.slice(0, COST_SAMPLE).map((id) => `message-${id}`));
      const emptyIds = await someWorkflowIds(temporalClient, `TaskQueue = "${ctx.taskQueue}-empty"`, COST_SAMPLE);
      const emptyCost = await temporalCost(temporalClient, emptyIds);
      const openMessages = await openWorkflows(temporalClient, `WorkflowType = "messageLifecycle"`);
      print(`  Temporal per delivered message: ${describeCost(messageCost)}; open message workflows after the run: ${openMessages}`);
      print(`  Temporal per empty workflow + one activity: ${describeCost(emptyCost)}`);
      const costLabel = "empty workflow + one empty activity";
      figures.add("temporal.message.actions", { label: "Temporal billable actions per delivered message", unit: "actions", better: "lower", baselineLabel: costLabel, target: { atMost: ACTIONS_PER_MESSAGE_TARGET } }, messageCost.actions, emptyCost.actions);
      figures.add("temporal.message.events", { label: "Temporal history events per delivered message", unit: "events", better: "lower", baselineLabel: costLabel }, messageCost.events, emptyCost.events);
      figures.add("temporal.message.bytes", { label: "Temporal history bytes per delivered message", unit: "bytes", better: "lower", baselineLabel: costLabel }, messageCost.bytes, emptyCost.bytes);
      figures.note("temporal.message.actions", `open message workflows after the run: ${openMessages}`);
    }

    if (settings.phases.has("webhooks")) {
      const url = `https://${receiver.host}:${receiver.receiver.port}/bench`;
      const { secret } = await createBenchEndpoint(ctx.databaseUrl, company.companyId, { host: receiver.host, url }, ["order.created"]);
      const loop = await startChild({
        name: "bare webhook loop",
        script: BARE_WEBHOOK_LOOP,
        env: { ...process.env, BENCH_HOOK_HOST: receiver.host, BENCH_HOOK_CA_FILE: receiver.caFile },
        verbose: settings.verbose,
      });
      children.push(loop);
      // The ceiling of a workflow per delivery: the empty workflow + one activity, measured in each run beside the service.
      const empty = await startChild({
        name: "empty-workflow baseline (webhooks)",
        script: EMPTY_WORKFLOW,
        env: { ...process.env, TEMPORAL_ADDRESS: ctx.temporalAddress, TASK_QUEUE: `${ctx.taskQueue}-empty-hooks`, MAX_ACTIVITIES: String(WORKER_ACTIVITIES) },
        verbose: settings.verbose,
      });
      children.push(empty);
      const n = settings.events;
      print(`webhook deliveries, ${n} events per batch to one endpoint (local HTTPS receiver)`);
      await webhookBatch(db, company.companyId, Math.min(n, 30));
      await loop.call({ mode: "throughput", url, secret, count: Math.min(n, 30), concurrency: WORKER_ACTIVITIES });
      await empty.call<number>({ batch: Math.min(n, 30), concurrency: settings.connections });
      const bareLabel = `bare loop: same signed bodies, same HTTPS sender, ${WORKER_ACTIVITIES} at a time`;
      const emptyLabel = "empty workflow + one empty activity, same Temporal (a workflow per delivery's ceiling)";
      let lastDeliveries: string[] = [];
      for (let run = 1; run <= settings.runs; run++) {
        const bare = await loop.call<{ seconds: number; failures: number }>({ mode: "throughput", url, secret, count: n, concurrency: WORKER_ACTIVITIES });
        const emptySeconds = await empty.call<number>({ batch: n, concurrency: settings.connections });
        const { seconds, deliveryIds } = await webhookBatch(db, company.companyId, n);
        lastDeliveries = deliveryIds;
        print(
          `  run ${run}: service ${(n / seconds).toFixed(1)} deliveries/s, empty workflow ${(n / emptySeconds).toFixed(1)} workflows/s, ` +
            `bare loop ${(n / bare.seconds).toFixed(1)} posts/s`,
        );
        figures.add("webhooks.rate", { label: "webhook deliveries", unit: "deliveries/s", better: "higher", baselineLabel: emptyLabel, target: WEBHOOK_RATE_TARGET }, n / seconds, n / emptySeconds);
        figures.add("webhooks.rate.bare", { label: "webhook deliveries (reference: no workflow)", unit: "deliveries/s", better: "higher", baselineLabel: bareLabel }, n / seconds, n / bare.seconds);
        if (bare.failures > 0) figures.note("webhooks.rate.bare", `baseline: ${bare.failures} failed posts in one run`);

        const { delays, stages, deliveryIds: delayed } = await webhookDelays(db, api.operatorUrl, company.companyId, receiver.firstSeen, settings.latencyEvents, settings.pauseMs);
        const bareDelays = await loop.call<{ delaysMs: number[] }>({ mode: "latency", url, secret, count: settings.latencyEvents, pauseMs: settings.pauseMs });
        const delayLabel = "one post of the bare loop (sign, TLS connect, post, answer)";
        print(
          `  run ${run}: event -> first attempt p50 ${percentile(delays, 50).toFixed(0)} ms, p95 ${percentile(delays, 95).toFixed(0)} ms; ` +
            `bare post p50 ${percentile(bareDelays.delaysMs, 50).toFixed(1)} ms`,
        );
        print(
          `    where it goes (p50 from the event's record): delivery row ${stages.fannedOut.toFixed(0)} ms, workflow started ${stages.started.toFixed(0)} ms, ` +
            `attempt begun ${stages.attempting.toFixed(0)} ms, at the receiver ${percentile(delays, 50).toFixed(0)} ms`,
        );
        print(`    inside Temporal (p50, history event times): ${await temporalStages(temporalClient, delayed.map(webhookWorkflowId))}`);
        figures.add("webhooks.delay.p50", { label: "webhook event to first attempt, p50", unit: "ms", better: "lower", baselineLabel: delayLabel, target: WEBHOOK_DELAY_P50_TARGET }, percentile(delays, 50), percentile(bareDelays.delaysMs, 50));
        figures.add("webhooks.delay.p95", { label: "webhook event to first attempt, p95", unit: "ms", better: "lower", baselineLabel: delayLabel, target: WEBHOOK_DELAY_P95_TARGET }, percentile(delays, 95), percentile(bareDelays.delaysMs, 95));
      }
      if (!peaks.has("empty")) peaks.set("empty", await empty.stop());
      const deliveryCost = await temporalCost(temporalClient, lastDeliveries.slice(0, COST_SAMPLE).map((id) => `webhook-delivery-${id}`));
      const openDeliveries = await openWorkflows(temporalClient, `WorkflowType = "webhookDelivery"`);
      print(`  Temporal per successful delivery: ${describeCost(deliveryCost)}; open delivery workflows after the run: ${openDeliveries}`);
      figures.add("temporal.delivery.actions", { label: "Temporal billable actions per successful delivery", unit: "actions", better: "lower", baselineLabel: "(no baseline: the target)", target: { atMost: ACTIONS_PER_DELIVERY_TARGET } }, deliveryCost.actions, ACTIONS_PER_DELIVERY_TARGET);
      figures.note("temporal.delivery.actions", `${deliveryCost.events.toFixed(1)} history events, ${Math.round(deliveryCost.bytes)} bytes per delivery; open delivery workflows after the run: ${openDeliveries}`);
    }
    peaks.set("api", await api.child.stop());
    peaks.set("worker", await worker.stop());
  } finally {
    for (const child of children.reverse()) await child.stop();
    await temporalConnection.close();
    await db.end();
  }
  return { apiPeakMb: peaks.get("api") ?? Number.NaN, workerPeakMb: peaks.get("worker") ?? Number.NaN, emptyPeakMb: peaks.get("empty") ?? Number.NaN };
}
