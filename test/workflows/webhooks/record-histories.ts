/**
 * `node test/workflows/webhooks/record-histories.ts [suffix]`: runs the
 * webhook delivery workflow on a Temporal dev server of its own through
 * each of its paths (the attempt activity scripted, as in
 * test/webhooks/delivery-workflow.test.ts), started and retried by the real
 * dispatcher, and writes each run's history to histories/<path>.json (with
 * `-<suffix>` when given), for replay.test.ts.
 *
 * Each path is recorded twice: as the relay starts a run now, and as a run
 * started with remote attempts (`remote-` names; the histories of runs
 * started before attempts became local activities). Histories recorded by
 * a released version are kept as they are: a change of the workflow must
 * still replay them (patched() where the commands change); record new ones
 * beside them (a suffix) rather than over them.
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { WorkflowHandle } from "@temporalio/client";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import type { AttemptDeliveryInput, WebhookDeliveryActivities } from "../../../src/adapters/temporal/webhooks/activities.ts";
import { deliveryWorkflowInput, WebhookDeliveryDispatcher, webhookDeliveryWorkflowId } from "../../../src/adapters/temporal/webhooks/dispatcher.ts";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";
import type { DeliverySchedule, DeliveryState, DeliveryToDispatch, WebhookOutbox } from "../../../src/capabilities/webhooks/index.ts";
import { findTemporalCli } from "../../../src/runtime/temporal-dev-server.ts";
import { SEARCH_ATTRIBUTES, WEBHOOK_DELIVERY_STATUS } from "../../../workflows/search-attributes.ts";
import { webhookDelivery } from "../../../workflows/webhooks/delivery.ts";

/** What the attempt activity does for one attempt: answer a state, or throw (the attempt cannot run). */
type Step = DeliveryState | "gone" | "throw";

interface Path {
  readonly schedule: DeliverySchedule;
  /** The activity's answers, in order; a failure (`attempting`, or `dead_letter` when final) once they run out. */
  readonly steps: Step[];
  /** A manual retry once the delivery is a dead letter: `signal` while its workflow waits, `new-run` after it closed. */
  readonly retry?: "signal" | "new-run";
}

/** Short waits: the durable timers are real, the run takes seconds. */
const SHORT: DeliverySchedule = { maxAttempts: 3, waitsSeconds: [1, 1], deadLetterWaitSeconds: 60 };
/** A dead letter whose workflow closes at once when nobody retries it. */
const CLOSES: DeliverySchedule = { maxAttempts: 2, waitsSeconds: [1], deadLetterWaitSeconds: 1 };

const PATHS: Record<string, Path> = {
  // The receiver answers 2xx on the first attempt.
  "first-attempt-success": { schedule: SHORT, steps: ["succeeded"] },
  // A failure, a durable timer, then 2xx.
  "failure-then-success": { schedule: SHORT, steps: ["attempting", "succeeded"] },
  // Every attempt of the round fails: a dead letter; nobody retries it and its workflow closes.
  "dead-letter": { schedule: CLOSES, steps: [] },
  // A dead letter retried while its workflow waits (the `retry` signal): a new round, numbered on, that succeeds.
  "dead-letter-retried": { schedule: SHORT, steps: ["attempting", "attempting", "dead_letter", "attempting", "succeeded"], retry: "signal" },
  // A dead letter retried after its workflow closed: a new run of the same id (signalWithStart), numbered on.
  "dead-letter-new-run": { schedule: CLOSES, steps: ["attempting", "dead_letter", "succeeded"], retry: "new-run" },
  // The attempt's activity runs out of tries (an endpoint secret no key opens): recorded as failed, the round goes on.
  "could-not-run": { schedule: SHORT, steps: ["throw", "succeeded"] },
};

const scripts = new Map<string, Step[]>();

const activities: WebhookDeliveryActivities = {
  async attemptDelivery(input: AttemptDeliveryInput) {
    const script = scripts.get(input.deliveryId) ?? [];
    const failed = input.final ? "dead_letter" : "attempting";
    if (input.couldNotRun) {
      // The attempt that threw on every try is recorded as failed; the next attempt reads the next step.
      if (script[0] === "throw") script.shift();
      return { state: failed, errorClass: "network" };
    }
    const next = script[0] ?? failed;
    if (next === "throw") throw new Error("the endpoint secret does not open with any configured key");
    script.shift();
    if (next === "succeeded") return { state: next, status: 200 };
    if (next === "gone") return { state: next };
    return { state: next, status: 500 };
  },
};

const suffix = process.argv[2] ? `-${process.argv[2]}` : "";

Runtime.install({ logger: new DefaultLogger("ERROR") });
const cli = await findTemporalCli();
if (!cli) throw new Error("Temporal CLI not found: set TEMPORAL_CLI_PATH");
const env = await TestWorkflowEnvironment.createLocal({
  server: { executable: { type: "existing-path", path: cli }, ip: "127.0.0.1", searchAttributes: [...SEARCH_ATTRIBUTES] },
});
const taskQueue = `record-histories-${randomUUID()}`;
const worker = await Worker.create({
  connection: env.nativeConnection,
  taskQueue,
  workflowBundle: await workflowBundle(),
  activities,
});
const outbox: WebhookOutbox = {
  fanOut: async () => 0,
  unstarted: async () => [],
  retryRequests: async () => [],
  markWorkflowStarted: async () => {},
  clearRetryRequest: async () => {},
};
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "histories");
await mkdir(out, { recursive: true });

async function waitForState(handle: WorkflowHandle, state: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await handle.describe()).typedSearchAttributes.get(WEBHOOK_DELIVERY_STATUS) !== state) {
    if (Date.now() > deadline) throw new Error(`${handle.workflowId} never showed ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts the delivery as the relay does (`local`), or with the same input
 * save remote attempts, as runs started before attempts were local.
 */
async function start(dispatcher: WebhookDeliveryDispatcher, delivery: DeliveryToDispatch, schedule: DeliverySchedule, local: boolean): Promise<void> {
  if (local) {
    if (!(await dispatcher.start(delivery))) throw new Error("not started");
    return;
  }
  await env.client.workflow.start(webhookDelivery, {
    workflowId: webhookDeliveryWorkflowId(delivery.id),
    taskQueue,
    args: [{ ...deliveryWorkflowInput(delivery, schedule), localAttempts: false }],
    workflowIdReusePolicy: "REJECT_DUPLICATE",
  });
}

try {
  await worker.runUntil(async () => {
    for (const local of [true, false]) {
      for (const [name, script] of Object.entries(PATHS)) {
        const id = randomUUID();
        scripts.set(id, [...script.steps]);
        const delivery: DeliveryToDispatch = { id, companyId: "company-1", endpointId: "endpoint-1", event: "delivered", attemptCount: 0, retryRequest: null };
        const dispatcher = new WebhookDeliveryDispatcher({ client: env.client, taskQueue, outbox, schedule: script.schedule, log: { warn: () => {} } });
        await start(dispatcher, delivery, script.schedule, local);
        const handle = env.client.workflow.getHandle(webhookDeliveryWorkflowId(id));
        const firstRun = (await handle.describe()).runId;
        let history;
        if (script.retry === "signal") {
          await waitForState(handle, "dead_letter");
          await dispatcher.passRetry({ ...delivery, attemptCount: script.schedule.maxAttempts, retryRequest: "retry-1" });
          await handle.result();
          history = await handle.fetchHistory();
        } else if (script.retry === "new-run") {
          if ((await handle.result()) !== "dead_letter") throw new Error(`${name}: expected a dead letter`);
          if (local) {
            await dispatcher.passRetry({ ...delivery, attemptCount: script.schedule.maxAttempts, retryRequest: "retry-1" });
          } else {
            await env.client.workflow.signalWithStart(webhookDelivery, {
              workflowId: webhookDeliveryWorkflowId(id),
              taskQueue,
              args: [{ ...deliveryWorkflowInput(delivery, script.schedule, script.schedule.maxAttempts + 1), localAttempts: false }],
              workflowIdReusePolicy: "ALLOW_DUPLICATE",
              signal: "retry",
              signalArgs: [],
            });
          }
          const latest = env.client.workflow.getHandle(webhookDeliveryWorkflowId(id));
          await latest.result();
          if ((await latest.describe()).runId === firstRun) throw new Error(`${name}: expected a new run`);
          // The new run: it starts with the retry signal and numbers on.
          history = await latest.fetchHistory();
        } else {
          await handle.result();
          history = await handle.fetchHistory();
        }
        const file = `${local ? "" : "remote-"}${name}${suffix}.json`;
        // The object form of @temporalio/proto (its toJSON: 64-bit numbers and bytes as strings), which replay.test.ts reads back with History.fromObject.
        await writeFile(path.join(out, file), `${JSON.stringify(history, null, 2)}\n`);
        console.log(`${file}: ${await env.client.workflow.getHandle(webhookDeliveryWorkflowId(id)).result()}`);
      }
    }
  });
} finally {
  await env.teardown();
}
