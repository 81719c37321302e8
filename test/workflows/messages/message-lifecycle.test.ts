import { randomUUID } from "node:crypto";
import type { WorkflowHandle } from "@temporalio/client";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMessageActivities, type MessageActivityDependencies } from "../../../src/adapters/temporal/messages/activities.ts";
import type { PacePort } from "../../../src/capabilities/messages/lifecycle/ports.ts";
import { MessageDispatcher, messageWorkflowId } from "../../../src/adapters/temporal/messages/dispatcher.ts";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";
import { TransientHandoffError } from "../../../src/capabilities/messages/lifecycle/message-lifecycle.ts";
import { isPastHandoff, type MessageStatusName } from "../../../src/capabilities/messages/statuses.ts";
import { findTemporalCli } from "../../../src/runtime/temporal-dev-server.ts";
import { MAIL_STATUS, SEARCH_ATTRIBUTES } from "../../../workflows/search-attributes.ts";

/**
 * The message workflow on a real Temporal dev server, with the activities'
 * dependencies (lifecycle, sending pace) replaced by scripted fakes: every
 * branch of workflows/messages/message-lifecycle.ts, without PostgreSQL.
 * Workflows are started through the real dispatcher.
 */

/** What one message's fakes do, in order. */
interface Script {
  /** What checkSuppression answers (default: the message's current status). */
  readonly checked?: MessageStatusName;
  /** Answers of pace.reserve, one per call; 0 once they run out. */
  readonly paceWaits?: number[];
  /** Answers of handOff, one per call: a status, or an error to throw. */
  readonly handOffs?: Array<MessageStatusName | Error>;
}

const scripts = new Map<string, { script: Script; status: MessageStatusName }>();
/** Every call the activities made, as `method:messageId`. */
const calls: string[] = [];

function scripted(messageId: string) {
  const entry = scripts.get(messageId);
  if (!entry) throw new Error(`no script for message ${messageId}`);
  return entry;
}

/** One attempt as the lifecycle makes it (suppression check, pace, handoff), each step scripted and logged. */
const lifecycle: MessageActivityDependencies["lifecycle"] = {
  async attemptHandOff({ companyId, messageId, provider }) {
    calls.push(`checkSuppression:${messageId}`);
    const entry = scripted(messageId);
    if (entry.script.checked) entry.status = entry.script.checked;
    if (isPastHandoff(entry.status)) return { status: entry.status, waitMs: 0 };
    const waitMs = await pace.reserve({ provider, companyId });
    if (waitMs > 0) return { status: entry.status, waitMs };
    calls.push(`handOff:${messageId}`);
    const next = entry.script.handOffs?.shift() ?? "sent";
    if (next instanceof Error) throw next;
    entry.status = next;
    return { status: next, waitMs: 0 };
  },
  async markDeferred({ messageId }) {
    calls.push(`markDeferred:${messageId}`);
    const entry = scripted(messageId);
    entry.status = "deferred";
    return entry.status;
  },
};

/** The pace is per provider: each test uses the message id as its provider name. */
const pace: PacePort = {
  async reserve({ provider }) {
    calls.push(`reserve:${provider}`);
    return scripted(provider).script.paceWaits?.shift() ?? 0;
  },
};

function callsFor(messageId: string): string[] {
  return calls.filter((call) => call.endsWith(`:${messageId}`)).map((call) => call.split(":")[0] ?? "");
}

// The scripted failures would otherwise be logged as warnings by the worker.
Runtime.install({ logger: new DefaultLogger("ERROR") });

// Concurrent: most of the time goes to timers (pace waits).
describe.concurrent("the message workflow", () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `message-lifecycle-test-${randomUUID()}`;
  const started: string[] = [];

  beforeAll(async () => {
    const cli = await findTemporalCli();
    if (!cli) throw new Error("Temporal CLI not found: set TEMPORAL_CLI_PATH");
    env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: "existing-path", path: cli }, ip: "127.0.0.1", searchAttributes: [...SEARCH_ATTRIBUTES] },
    });
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createMessageActivities({ lifecycle }),
    });
    running = worker.run();
  });

  afterAll(async () => {
    if (worker?.getState() === "RUNNING") worker.shutdown();
    await running;
    await env?.teardown();
  });

  /** Starts a message's workflow as the API does, through the dispatcher. */
  async function dispatch(script: Script): Promise<{ id: string; handle: WorkflowHandle; dispatcher: MessageDispatcher }> {
    const id = randomUUID();
    scripts.set(id, { script, status: "queued" });
    const dispatcher = new MessageDispatcher({
      client: env.client,
      taskQueue,
      store: {
        unstarted: async () => [],
        markWorkflowStarted: async (_companyId, messageId) => void started.push(messageId),
        markWorkflowsStarted: async (messages) => void started.push(...messages.map((m) => m.id)),
      },
      provider: id,
      handoffTimeoutSeconds: 10,
      log: { warn: () => {} },
    });
    expect(await dispatcher.dispatch({ id, companyId: "company-1", recipientDomain: "customer.example" })).toBe(true);
    return { id, handle: env.client.workflow.getHandle(messageWorkflowId(id)), dispatcher };
  }

  async function mailStatus(handle: WorkflowHandle): Promise<string | undefined> {
    return (await handle.describe()).typedSearchAttributes.get(MAIL_STATUS);
  }

  /** Every value the workflow gave MailStatus, in order (from its history's upsert events). */
  async function mailStatusChanges(handle: WorkflowHandle): Promise<string[]> {
    const { events } = await handle.fetchHistory();
    return (events ?? []).flatMap((event) => {
      const data = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[MAIL_STATUS.name]?.data;
      return data ? [JSON.parse(Buffer.from(data).toString("utf8")) as string] : [];
    });
  }

  /** The history events a billing would count (Temporal Cloud's actions): start, activities, local activities, timers, signals, upserts. */
  async function billable(handle: WorkflowHandle): Promise<Record<string, number>> {
    const { events } = await handle.fetchHistory();
    const counts: Record<string, number> = {};
    const add = (kind: string, n = 1) => void (counts[kind] = (counts[kind] ?? 0) + n);
    for (const event of events ?? []) {
      if (event.workflowExecutionStartedEventAttributes) add("start");
      if (event.activityTaskStartedEventAttributes) add("activity", event.activityTaskStartedEventAttributes.attempt ?? 1);
      if (event.markerRecordedEventAttributes) add("localActivity");
      if (event.timerStartedEventAttributes) add("timer");
      if (event.workflowExecutionSignaledEventAttributes) add("signal");
      if (event.upsertWorkflowSearchAttributesEventAttributes) add("upsert");
    }
    return counts;
  }

  it("hands the message off at once and ends at `sent`: three billable actions, nothing left open", async () => {
    const { id, handle, dispatcher } = await dispatch({});
    // Dispatching again (the outbox relay after a lost acknowledgement) starts nothing new.
    expect(await dispatcher.dispatch({ id, companyId: "company-1", recipientDomain: "customer.example" })).toBe(true);
    expect(await handle.result()).toBe("sent");
    expect(await mailStatus(handle)).toBe("sent");
    expect(await mailStatusChanges(handle)).toEqual(["sent"]);
    expect(callsFor(id)).toEqual(["checkSuppression", "reserve", "handOff"]);
    expect(started.filter((startedId) => startedId === id)).toHaveLength(2);
    expect(await billable(handle)).toEqual({ start: 1, activity: 1, upsert: 1 });
    expect((await handle.describe()).status.name).toBe("COMPLETED");
  });

  it("schedules the handoff with a 10 s heartbeat timeout, so a dead worker's attempt is taken over in seconds", async () => {
    const { handle } = await dispatch({});
    await handle.result();
    const { events } = await handle.fetchHistory();
    const scheduled = (events ?? []).flatMap((event) => (event.activityTaskScheduledEventAttributes ? [event.activityTaskScheduledEventAttributes] : []));
    expect(scheduled).toHaveLength(1);
    expect(Number(scheduled[0]?.heartbeatTimeout?.seconds ?? 0)).toBe(10);
  });

  it("accepted messages are started off the caller's path, and marked started a batch at a time", async () => {
    const ids = Array.from({ length: 12 }, () => randomUUID());
    for (const id of ids) scripts.set(id, { script: {}, status: "queued" });
    const batches: string[][] = [];
    const dispatcher = new MessageDispatcher({
      client: env.client,
      taskQueue,
      store: {
        unstarted: async () => [],
        markWorkflowStarted: async () => {
          throw new Error("enqueued messages are marked in batches");
        },
        // A slow statement: the starts that complete meanwhile wait for the next one, together.
        markWorkflowsStarted: async (messages) => {
          batches.push(messages.map((m) => m.id));
          await new Promise((resolve) => setTimeout(resolve, 500));
        },
      },
      // The fake pace reads its script by provider name: any message of the batch will do.
      provider: ids[0] ?? "",
      handoffTimeoutSeconds: 10,
      log: { warn: () => {} },
      maxConcurrentStarts: 4,
    });
    for (const id of ids) dispatcher.enqueue({ id, companyId: "company-1", recipientDomain: "customer.example" });
    await dispatcher.settled();
    // Every message got its workflow, and was marked once.
    expect(batches.flat().sort()).toEqual([...ids].sort());
    // Starts that completed while a mark was being written share the next statement.
    expect(batches.length).toBeLessThan(ids.length);
    for (const id of ids) expect(await env.client.workflow.getHandle(messageWorkflowId(id)).result()).toBe("sent");
  });

  it("waits for the sending pace: shown `deferred` once, on durable timers, then sent", async () => {
    const { id, handle } = await dispatch({ paceWaits: [1_000, 500] });
    expect(await handle.result()).toBe("sent");
    expect(await mailStatus(handle)).toBe("sent");
    expect(await mailStatusChanges(handle)).toEqual(["deferred", "sent"]);
    expect(callsFor(id)).toEqual([
      "checkSuppression",
      "reserve",
      "markDeferred",
      "checkSuppression",
      "reserve",
      "checkSuppression",
      "reserve",
      "handOff",
    ]);
    // Durable: server-side timers for the waits the pace asked for, and nothing else.
    const { events } = await handle.fetchHistory();
    const timerMs = (events ?? []).flatMap((event) => {
      const timeout = event.timerStartedEventAttributes?.startToFireTimeout;
      return timeout ? [Number(timeout.seconds ?? 0) * 1_000 + Math.round((timeout.nanos ?? 0) / 1e6)] : [];
    });
    expect(timerMs).toEqual([1_000, 500]);
    // The deferred mark is a local activity: a marker, not an activity task.
    // One handoff activity per try (two told to wait), one local activity, two timers, two upserts.
    expect(await billable(handle)).toEqual({ start: 1, activity: 3, localActivity: 1, timer: 2, upsert: 2 });
  });

  it.each<MessageStatusName>(["suppressed", "failed", "rejected"])("ends at `%s`", async (end) => {
    const { id, handle } = await dispatch(end === "suppressed" ? { checked: "suppressed" } : { handOffs: [end] });
    expect(await handle.result()).toBe(end);
    expect(await mailStatus(handle)).toBe(end);
    expect(callsFor(id)).toEqual(end === "suppressed" ? ["checkSuppression"] : ["checkSuppression", "reserve", "handOff"]);
  });

  it("retries a handoff that failed transiently, then sends", async () => {
    const { id, handle } = await dispatch({ handOffs: [new TransientHandoffError("the email service is busy"), "sent"] });
    expect(await handle.result()).toBe("sent");
    expect(callsFor(id)).toEqual(["checkSuppression", "reserve", "handOff", "checkSuppression", "reserve", "handOff"]);
    // One activity, retried by its policy: the second attempt carries the first one's failure.
    const { events } = await handle.fetchHistory();
    const attempts = (events ?? []).flatMap((event) => (event.activityTaskStartedEventAttributes ? [event.activityTaskStartedEventAttributes] : []));
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.attempt).toBe(2);
    expect(attempts[0]?.lastFailure?.applicationFailureInfo?.type).toBe("TransientHandoff");
  });
});
