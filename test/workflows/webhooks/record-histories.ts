/**
 * `node test/workflows/webhooks/record-histories.ts [suffix]`: runs the
 * webhook delivery workflow on a Temporal dev server of its own through
 * each of its paths (the attempt activity scripted, as in
 * test/webhooks/delivery-workflow.test.ts), started and retried by the real
 * dispatcher, and writes each run's history to histories/<path>.json (with
 * `-<suffix>` when given), for replay.test.ts.
 *
 * The histories of runs started before LOCAL_ATTEMPTS_PATCH
 * (workflows/webhooks/delivery.ts) were recorded by the code of that time:
 * as the relay started runs then (`localAttempts` in the input), and with
 * remote attempts (`remote-` names). Histories recorded by a released
 * version are kept as they are: a change of the workflow must still replay
 * them (patched() where the commands change); record new ones beside them
 * (a suffix) rather than over them.
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { WorkflowHandle } from "@temporalio/client";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { WebhookDeliveryDispatcher, webhookDeliveryWorkflowId } from "../../../src/adapters/temporal/webhooks/dispatcher.ts";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";
import type { DeliverySchedule, DeliveryState, DeliveryToDispatch, WebhookOutbox } from "../../../src/capabilities/webhooks/index.ts";
import { findTemporalCli } from "../../../src/runtime/temporal-dev-server.ts";
import { SEARCH_ATTRIBUTES, WEBHOOK_DELIVERY_STATUS } from "../../../workflows/search-attributes.ts";
import type { AttemptDeliveryInput, WebhookDeliveryActivities } from "../../../workflows/webhooks/activities.ts";

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

try {
  await worker.runUntil(async () => {
    for (const [name, script] of Object.entries(PATHS)) {
      const id = randomUUID();
      scripts.set(id, [...script.steps]);
      const delivery: DeliveryToDispatch = { id, companyId: "company-1", endpointId: "endpoint-1", event: "delivered", attemptCount: 0, retryRequest: null };
      const dispatcher = new WebhookDeliveryDispatcher({ client: env.client, taskQueue, outbox, schedule: script.schedule, log: { warn: () => {} } });
      if (!(await dispatcher.start(delivery))) throw new Error(`${name}: not started`);
      const handle = env.client.workflow.getHandle(webhookDeliveryWorkflowId(id));
      const firstRun = (await handle.describe()).runId;
      if (script.retry === "signal") await waitForState(handle, "dead_letter");
      if (script.retry === "new-run" && (await handle.result()) !== "dead_letter") throw new Error(`${name}: expected a dead letter`);
      if (script.retry) await dispatcher.passRetry({ ...delivery, attemptCount: script.schedule.maxAttempts, retryRequest: "retry-1" });
      // After a retry of a closed dead letter, the new run: it starts with the retry signal and numbers on.
      const latest = env.client.workflow.getHandle(webhookDeliveryWorkflowId(id));
      const result = await latest.result();
      if (script.retry === "new-run" && (await latest.describe()).runId === firstRun) throw new Error(`${name}: expected a new run`);
      const file = `${name}${suffix}.json`;
      // The object form of @temporalio/proto (its toJSON: 64-bit numbers and bytes as strings), which replay.test.ts reads back with History.fromObject.
      await writeFile(path.join(out, file), `${JSON.stringify(await latest.fetchHistory(), null, 2)}\n`);
      console.log(`${file}: ${result}`);
    }
  });
} finally {
  await env.teardown();
}
