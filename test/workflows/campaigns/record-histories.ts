/**
 * `node test/workflows/campaigns/record-histories.ts <suffix>`: runs the
 * campaign workflow on a Temporal dev server of its own through each of its
 * paths (activities scripted) and writes each run's history to
 * histories/<path>-<suffix>.json, for replay.test.ts. Histories recorded by
 * a released version are kept as they are: new ones go beside them, never
 * over them (an existing file is not overwritten).
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { CampaignDispatcher, campaignWorkflowId } from "../../../src/adapters/temporal/campaigns/dispatcher.ts";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";
import { findTemporalCli } from "../../../src/runtime/temporal-dev-server.ts";
import type { CampaignActivities, CampaignBatch, CampaignStart } from "../../../workflows/campaigns/activities.ts";
import { SEARCH_ATTRIBUTES } from "../../../workflows/search-attributes.ts";

/** One path: what each start and each batch answers; `wakeAfterMs`: a `changed` signal that long after the start. */
interface Path {
  readonly starts: CampaignStart[];
  readonly batches: CampaignBatch[];
  readonly wakeAfterMs?: number;
}

const PATHS: Record<string, Path> = {
  // Sent now, in two batches.
  sent: { starts: [{ state: "sending", waitMs: 0 }], batches: [{ state: "sending", settled: 100, waiting: 50 }, { state: "sending", settled: 50, waiting: 0 }] },
  // Waits for its time on a durable timer, then sends.
  timer: { starts: [{ state: "scheduled", waitMs: 500 }, { state: "sending", waitMs: 0 }], batches: [{ state: "sending", settled: 3, waiting: 0 }] },
  // Cancelled while it waits: woken by the signal, it ends without sending.
  cancelled: { starts: [{ state: "scheduled", waitMs: 3_600_000 }, { state: "cancelled", waitMs: 0 }], batches: [], wakeAfterMs: 500 },
  // Paused by its first batch's look, resumed by the signal, then sent.
  paused: {
    starts: [{ state: "sending", waitMs: 0 }],
    batches: [{ state: "paused", settled: 0, waiting: 10 }, { state: "sending", settled: 10, waiting: 0 }],
    wakeAfterMs: 1_000,
  },
};

const scripts = new Map<string, Path>();
const script = (campaignId: string): Path => {
  const found = scripts.get(campaignId);
  if (!found) throw new Error(`no script for ${campaignId}`);
  return found;
};

const activities: CampaignActivities = {
  async startCampaign(_companyId, campaignId) {
    return script(campaignId).starts.shift() ?? { state: "sending", waitMs: 0 };
  },
  async sendCampaignBatch(_companyId, campaignId) {
    return script(campaignId).batches.shift() ?? { state: "sending", settled: 0, waiting: 0 };
  },
  async finishCampaign() {},
};

Runtime.install({ logger: new DefaultLogger("ERROR") });
const cli = await findTemporalCli();
if (!cli) throw new Error("Temporal CLI not found: set TEMPORAL_CLI_PATH");
const env = await TestWorkflowEnvironment.createLocal({
  server: { executable: { type: "existing-path", path: cli }, ip: "127.0.0.1", searchAttributes: [...SEARCH_ATTRIBUTES] },
});
const taskQueue = `record-histories-${randomUUID()}`;
const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
const suffix = process.argv[2];
if (!suffix) throw new Error("usage: record-histories.ts <suffix> (the files are histories/<path>-<suffix>.json)");
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "histories");
await mkdir(out, { recursive: true });
const dispatcher = new CampaignDispatcher({ client: env.client, taskQueue, store: { markWorkflowStarted: async () => {} }, log: { warn: () => {} } });
try {
  await worker.runUntil(async () => {
    for (const [name, path_] of Object.entries(PATHS)) {
      const id = randomUUID();
      scripts.set(id, { starts: [...path_.starts], batches: [...path_.batches] });
      await dispatcher.start("company-1", id);
      if (path_.wakeAfterMs !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, path_.wakeAfterMs));
        await dispatcher.wake("company-1", id);
      }
      const handle = env.client.workflow.getHandle(campaignWorkflowId(id));
      const result = await handle.result();
      await writeFile(path.join(out, `${name}-${suffix}.json`), `${JSON.stringify(await handle.fetchHistory(), null, 2)}\n`, { flag: "wx" });
      console.log(`${name}: ${result}`);
    }
  });
} finally {
  await env.teardown();
}
