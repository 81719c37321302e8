/**
 * `node test/workflows/domains/record-histories.ts [suffix]`: runs the
 * domain re-check workflow on a Temporal dev server of its own through each
 * of its paths (the check activity scripted), started by the real starter,
 * and writes each run's history to histories/<path>.json (with `-<suffix>`
 * when given), for replay.test.ts. Each path's outcome is checked as it
 * runs: a path that ends otherwise stops the recording.
 *
 * Histories recorded by a released version are kept as they are: a change
 * of the workflow must still replay them (patched() where the commands
 * change); record new ones beside them (a suffix) rather than over them.
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { createDomainChecksStarter, type DomainCheckSchedule, domainChecksInput, domainChecksWorkflowId } from "../../../src/adapters/temporal/domains/dispatcher.ts";
import { domainChecks } from "../../../workflows/domains/domain-checks.ts";
import { workflowBundle } from "../../../src/adapters/temporal/worker.ts";
import { findTemporalCli } from "../../../src/runtime/temporal-dev-server.ts";
import type { CheckedDomainStatus, DomainCheckActivities } from "../../../workflows/domains/activities.ts";
import { DOMAIN_STATUS, SEARCH_ATTRIBUTES } from "../../../workflows/search-attributes.ts";

interface Path {
  readonly schedule: DomainCheckSchedule;
  /** The check's answers, in order; `pending` once they run out. */
  readonly steps: CheckedDomainStatus[];
  readonly result: string;
  /** The search attribute DomainStatus at the end. */
  readonly shown: string;
}

/** Short waits: the durable timers are real, a run takes seconds. */
const SHORT: DomainCheckSchedule = { pendingIntervalSeconds: 1, pendingHours: 1, verifiedIntervalSeconds: 1 };

const PATHS: Record<string, Path> = {
  // Pending, published, verified; a record lost (degraded), back; then the domain is deleted.
  "verified-degraded-gone": { schedule: SHORT, steps: ["pending", "pending", "verified", "degraded", "verified", "gone"], result: "gone", shown: "verified" },
  // DNS could not answer: nothing shown, the next check as planned.
  "unavailable-then-verified": { schedule: SHORT, steps: ["unavailable", "verified", "gone"], result: "gone", shown: "verified" },
};

/** Never verified: the automatic checks stop at the end of the pending window (3 seconds here, started with that input). */
const WINDOW: Path = { schedule: SHORT, steps: [], result: "stopped_pending", shown: "pending" };

const scripts = new Map<string, CheckedDomainStatus[]>();

const activities: DomainCheckActivities = {
  async checkDomain(input) {
    return { status: scripts.get(input.domainId)?.shift() ?? "pending" };
  },
};

const suffix = process.argv[2] ? `-${process.argv[2]}` : "";

Runtime.install({ logger: new DefaultLogger("ERROR") });
const cli = await findTemporalCli();
if (!cli) throw new Error("Temporal CLI not found: set TEMPORAL_CLI_PATH");
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "histories");
await mkdir(out, { recursive: true });

async function record(env: TestWorkflowEnvironment, name: string, run: Path, pendingForSeconds?: number): Promise<void> {
  const taskQueue = `record-histories-${randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
  await worker.runUntil(async () => {
    const domainId = randomUUID();
    scripts.set(domainId, [...run.steps]);
    const starter = createDomainChecksStarter({ client: () => env.client, taskQueue, schedule: run.schedule, log: { warn: (details) => console.error(details) } });
    if (pendingForSeconds === undefined) await starter.domainAdded({ companyId: "company-1", domainId });
    else {
      const input = { ...domainChecksInput({ companyId: "company-1", domainId }, run.schedule), pendingForSeconds };
      await env.client.workflow.start(domainChecks, { workflowId: domainChecksWorkflowId(domainId), taskQueue, args: [input] });
    }
    const handle = env.client.workflow.getHandle(domainChecksWorkflowId(domainId));
    const deadline = Date.now() + 30_000;
    while (!(await handle.describe().then(() => true, () => false))) {
      if (Date.now() > deadline) throw new Error(`${name}: not started`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const result = await handle.result();
    const shown = (await handle.describe()).typedSearchAttributes.get(DOMAIN_STATUS);
    if (result !== run.result || shown !== run.shown) throw new Error(`${name}: ended ${result} showing ${shown}, not ${run.result} showing ${run.shown}`);
    const file = `${name}${suffix}.json`;
    // The object form of @temporalio/proto (its toJSON), which replay.test.ts reads back with History.fromObject.
    await writeFile(path.join(out, file), `${JSON.stringify(await handle.fetchHistory(), null, 2)}\n`);
    console.log(`${file}: ${result}`);
  });
}

const server = { executable: { type: "existing-path" as const, path: cli }, ip: "127.0.0.1", searchAttributes: [...SEARCH_ATTRIBUTES] };
const env = await TestWorkflowEnvironment.createLocal({ server });
try {
  for (const [name, run] of Object.entries(PATHS)) await record(env, name, run);
  await record(env, "pending-window-ends", WINDOW, 3);
} finally {
  await env.teardown();
}
