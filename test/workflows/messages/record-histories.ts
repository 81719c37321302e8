/**
 * `node test/workflows/messages/record-histories.ts <suffix>`: runs the
 * message workflow on a Temporal dev server of its own through each of its
 * paths (activities scripted, as in message-lifecycle.test.ts) and writes
 * each run's history to histories/<path>-<suffix>.json, for replay.test.ts.
 * Histories recorded by a released version are kept as they are: a change
 * of the workflow must still replay them (patched() where the commands
 * change), so new ones go beside them, never over them (an existing file
 * is not overwritten).
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { createMessageActivities, type MessageActivityDependencies } from "../../../src/adapters/temporal/messages/activities.ts";
import type { PacePort } from "../../../src/capabilities/messages/lifecycle/ports.ts";
import { MessageDispatcher, messageWorkflowId } from "../../../src/adapters/temporal/messages/dispatcher.ts";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";
import { TransientHandoffError } from "../../../src/capabilities/messages/lifecycle/message-lifecycle.ts";
import type { MessageStatusName } from "../../../src/capabilities/messages/statuses.ts";
import { findTemporalCli } from "../../../src/runtime/temporal-dev-server.ts";
import { SEARCH_ATTRIBUTES } from "../../../workflows/search-attributes.ts";

/** One path of the workflow: what the pace answers, then what each handoff does. */
interface Path {
  readonly paceWaits: number[];
  readonly handOffs: Array<MessageStatusName | Error>;
}

const PATHS: Record<string, Path> = {
  // Handed off at once.
  sent: { paceWaits: [], handOffs: ["sent"] },
  // The pace asks to wait twice: `deferred` once, two durable timers, then sent.
  deferred: { paceWaits: [1_000, 500], handOffs: ["sent"] },
  // The email service could not take it: the activity is retried by its policy.
  "handoff-retry": { paceWaits: [], handOffs: [new TransientHandoffError("the email service is busy"), "sent"] },
  // Ends without a handoff.
  suppressed: { paceWaits: [], handOffs: ["suppressed"] },
};

const scripts = new Map<string, Path>();

const lifecycle: MessageActivityDependencies["lifecycle"] = {
  async attemptHandOff({ companyId, messageId, provider }) {
    const script = scripts.get(messageId);
    if (!script) throw new Error(`no script for ${messageId}`);
    if (script.handOffs[0] === "suppressed") return { status: "suppressed", waitMs: 0 };
    const waitMs = await pace.reserve({ provider, companyId });
    if (waitMs > 0) return { status: "queued", waitMs };
    const next = script.handOffs.shift() ?? "sent";
    if (next instanceof Error) throw next;
    return { status: next, waitMs: 0 };
  },
  async markDeferred() {
    return "deferred";
  },
};

/** The provider name is the message id, so the pace reads that message's script. */
const pace: PacePort = {
  async reserve({ provider }) {
    return scripts.get(provider)?.paceWaits.shift() ?? 0;
  },
};

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
  activities: createMessageActivities({ lifecycle }),
});
const suffix = process.argv[2];
if (!suffix) throw new Error("usage: record-histories.ts <suffix> (the files are histories/<path>-<suffix>.json)");
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "histories");
await mkdir(out, { recursive: true });
try {
  await worker.runUntil(async () => {
    for (const [name, script] of Object.entries(PATHS)) {
      const id = randomUUID();
      scripts.set(id, { paceWaits: [...script.paceWaits], handOffs: [...script.handOffs] });
      const dispatcher = new MessageDispatcher({
        client: env.client,
        taskQueue,
        store: { unstarted: async () => [], markWorkflowStarted: async () => {}, markWorkflowsStarted: async () => {} },
        provider: id,
        handoffTimeoutSeconds: 10,
        log: { warn: () => {} },
      });
      if (!(await dispatcher.dispatch({ id, companyId: "company-1", recipientDomain: "customer.example" }))) throw new Error("not started");
      const handle = env.client.workflow.getHandle(messageWorkflowId(id));
      const result = await handle.result();
      // The object form of @temporalio/proto (its toJSON: 64-bit numbers and bytes as strings), which replay.test.ts reads back with History.fromObject.
      await writeFile(path.join(out, `${name}-${suffix}.json`), `${JSON.stringify(await handle.fetchHistory(), null, 2)}\n`, { flag: "wx" });
      console.log(`${name}: ${result}`);
    }
  });
} finally {
  await env.teardown();
}
