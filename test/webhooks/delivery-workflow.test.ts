import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { WorkflowHandle } from "@temporalio/client";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookDeliveryDispatcher, webhookDeliveryWorkflowId } from "../../src/adapters/temporal/webhooks/dispatcher.ts";
import type { DeliverySchedule, DeliveryState, DeliveryToDispatch, WebhookOutbox } from "../../src/capabilities/webhooks/index.ts";
import { findTemporalCli } from "../../src/runtime/temporal-dev-server.ts";
import { SEARCH_ATTRIBUTES, WEBHOOK_DELIVERY_STATUS, WEBHOOK_ENDPOINT_ID, WEBHOOK_EVENT } from "../../workflows/search-attributes.ts";
import type { AttemptDeliveryInput, WebhookDeliveryActivities } from "../../workflows/webhooks/activities.ts";

/**
 * The delivery workflow (workflows/webhooks/delivery.ts) on a real Temporal
 * dev server, started and told to retry through the real dispatcher, with
 * the attempt activity replaced by a script: the schedule, the dead letter,
 * the manual retry (open and closed workflow), search attributes and the
 * refusal of a second workflow for a delivery.
 */
const WORKFLOWS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../workflows/webhooks/delivery.ts");

type Scripted = DeliveryState | "gone";
/** Answers of the attempt activity per delivery, in order; `attempting` (a failure) when they run out. */
const scripts = new Map<string, Scripted[]>();
const calls = new Map<string, AttemptDeliveryInput[]>();

const activities: WebhookDeliveryActivities = {
  async attemptDelivery(input) {
    calls.set(input.deliveryId, [...(calls.get(input.deliveryId) ?? []), input]);
    const next = scripts.get(input.deliveryId)?.shift() ?? (input.final ? "dead_letter" : "attempting");
    return next === "succeeded" ? { state: next, status: 200 } : next === "gone" ? { state: next } : { state: next, status: 500 };
  },
};

Runtime.install({ logger: new DefaultLogger("ERROR") });

/** Fast schedule for most tests: 5 attempts, 1 s apart; a dead letter's workflow stays open 30 s. */
const FAST: DeliverySchedule = { maxAttempts: 5, waitsSeconds: [1, 1, 1, 1], deadLetterWaitSeconds: 30 };

describe("the webhook delivery workflow", () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `webhook-delivery-test-${randomUUID()}`;
  const started: string[] = [];
  const cleared: string[] = [];
  const outbox: WebhookOutbox = {
    fanOut: async () => 0,
    unstarted: async () => [],
    retryRequests: async () => [],
    markWorkflowStarted: async (_companyId, deliveryId) => void started.push(deliveryId),
    clearRetryRequest: async (_companyId, deliveryId) => void cleared.push(deliveryId),
  };
  const dispatcher = (schedule?: DeliverySchedule) =>
    new WebhookDeliveryDispatcher({
      client: env.client,
      taskQueue,
      outbox,
      ...(schedule ? { schedule } : {}),
      log: { warn: (details, message) => console.warn(message, details) },
    });

  beforeAll(async () => {
    const cli = await findTemporalCli();
    if (!cli) throw new Error("Temporal CLI not found: set TEMPORAL_CLI_PATH");
    env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: "existing-path", path: cli }, ip: "127.0.0.1", searchAttributes: [...SEARCH_ATTRIBUTES] },
    });
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: new DefaultLogger("ERROR") }),
      activities,
    });
    running = worker.run();
  });

  afterAll(async () => {
    if (worker?.getState() === "RUNNING") worker.shutdown();
    await running;
    await env?.teardown();
  });

  function delivery(script: Scripted[], attemptCount = 0): DeliveryToDispatch {
    const id = randomUUID();
    scripts.set(id, [...script]);
    return { id, companyId: randomUUID(), endpointId: randomUUID(), event: "delivered", attemptCount, retryRequest: null };
  }

  const handleOf = (id: string): WorkflowHandle => env.client.workflow.getHandle(webhookDeliveryWorkflowId(id));
  const numbers = (id: string) => (calls.get(id) ?? []).map((c) => c.attempt);

  async function statusOf(id: string): Promise<unknown> {
    return (await handleOf(id).describe()).typedSearchAttributes.get(WEBHOOK_DELIVERY_STATUS);
  }

  async function waitUntil(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it("succeeds on the first 2xx: one attempt, numbered 1, state succeeded", async () => {
    const d = delivery(["succeeded"]);
    expect(await dispatcher(FAST).start(d)).toBe(true);
    expect(await handleOf(d.id).result()).toBe("succeeded");
    expect(numbers(d.id)).toEqual([1]);
    expect(await statusOf(d.id)).toBe("succeeded");
    expect(started).toContain(d.id);
    const described = await handleOf(d.id).describe();
    expect(described.typedSearchAttributes.get(WEBHOOK_ENDPOINT_ID)).toBe(d.endpointId);
    expect(described.typedSearchAttributes.get(WEBHOOK_EVENT)).toBe("delivered");
  });

  it("retries on the schedule after failures, passing each attempt its number and the wait to the next", async () => {
    const d = delivery(["attempting", "attempting", "succeeded"]);
    await dispatcher(FAST).start(d);
    expect(await handleOf(d.id).result()).toBe("succeeded");
    const made = calls.get(d.id) ?? [];
    expect(made.map((c) => [c.attempt, c.final, c.retryInMs])).toEqual([
      [1, false, 1000],
      [2, false, 1000],
      [3, false, 1000],
    ]);
  });

  it("makes a dead letter of the fifth failure, then a retry signal starts a new round numbered on", async () => {
    const d = delivery([]);
    await dispatcher(FAST).start(d);
    await waitUntil(async () => (await statusOf(d.id)) === "dead_letter", "the dead letter");
    const made = calls.get(d.id) ?? [];
    expect(made.map((c) => [c.attempt, c.final])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
      [5, true],
    ]);
    expect(made[4]?.retryInMs).toBeNull();
    // No automatic retry: the workflow waits.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(numbers(d.id)).toHaveLength(5);
    expect((await handleOf(d.id).describe()).status.name).toBe("RUNNING");

    scripts.set(d.id, ["attempting", "succeeded"]);
    expect(await dispatcher(FAST).passRetry({ ...d, attemptCount: 5, retryRequest: "2025-11-23T10:00:00.000000Z" })).toBe(true);
    expect(await handleOf(d.id).result()).toBe("succeeded");
    expect(numbers(d.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(cleared).toContain(d.id);
  });

  it("closes a dead letter nobody retried, and a later retry starts a new run that numbers on", async () => {
    const d = delivery([]);
    const short: DeliverySchedule = { maxAttempts: 2, waitsSeconds: [1], deadLetterWaitSeconds: 1 };
    await dispatcher(short).start(d);
    expect(await handleOf(d.id).result()).toBe("dead_letter");
    const firstRun = (await handleOf(d.id).describe()).runId;

    scripts.set(d.id, ["succeeded"]);
    expect(await dispatcher(short).passRetry({ ...d, attemptCount: 2, retryRequest: "2025-11-23T10:00:00.000000Z" })).toBe(true);
    const latest = env.client.workflow.getHandle(webhookDeliveryWorkflowId(d.id));
    expect(await latest.result()).toBe("succeeded");
    expect((await latest.describe()).runId).not.toBe(firstRun);
    expect(numbers(d.id)).toEqual([1, 2, 3]);
  });

  it("ends when the delivery is gone (endpoint deleted)", async () => {
    const d = delivery(["attempting", "gone"]);
    await dispatcher(FAST).start(d);
    expect(await handleOf(d.id).result()).toBe("gone");
    expect(numbers(d.id)).toEqual([1, 2]);
  });

  it("refuses a second workflow for a delivery, even after the first closed", async () => {
    const d = delivery(["succeeded"]);
    await dispatcher(FAST).start(d);
    await handleOf(d.id).result();
    const runId = (await handleOf(d.id).describe()).runId;
    // Dispatched again (say the relay lost the started mark): the existing workflow counts as started.
    expect(await dispatcher(FAST).start(d)).toBe(true);
    expect((await handleOf(d.id).describe()).runId).toBe(runId);
    expect(numbers(d.id)).toEqual([1]);
  });

  it("waits 1 min, 5 min, 15 min and 1 h between attempts by default (the timers in the history)", async () => {
    const d = delivery([]);
    // The production schedule: no override.
    await dispatcher().start(d);
    const handle = handleOf(d.id);
    const timers = async () => {
      const history = await handle.fetchHistory();
      return (history.events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => e.timerStartedEventAttributes);
    };
    // Each wait is a durable timer; the `retry` signal cuts it short, so the test need not wait an hour.
    for (let k = 1; k <= 4; k++) {
      await waitUntil(async () => (await timers()).length >= k, `timer ${k}`);
      await handle.signal("retry");
    }
    await waitUntil(async () => (await statusOf(d.id)) === "dead_letter", "the dead letter");
    const seconds = (await timers()).map((t) => Number(String(t?.startToFireTimeout?.seconds ?? 0)));
    expect(seconds.slice(0, 4)).toEqual([60, 300, 900, 3600]);
    // The fifth timer is the dead letter's wait for a manual retry (7 days), not an automatic attempt.
    expect(seconds[4]).toBe(7 * 24 * 3600);
    expect(numbers(d.id)).toEqual([1, 2, 3, 4, 5]);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.timerCanceledEventAttributes)).toHaveLength(4);
    await handle.terminate("test over");
  });
});
