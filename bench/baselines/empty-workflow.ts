/**
 * The end-to-end baseline: the rate at which the Temporal server of the
 * run completes a workflow with one empty activity, with a worker built
 * like the service's (src/adapters/temporal/worker.ts: same SDK, same
 * activity concurrency) and started 32 at a time like the sends.
 *
 * A child process of bench/run.ts (its memory is the worker's baseline):
 * TEMPORAL_ADDRESS, TASK_QUEUE, MAX_ACTIVITIES. Over IPC: `{ batch, concurrency }`
 * -> seconds from the first start to the last result.
 */
import path from "node:path";
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Client, Connection, type WorkflowHandle } from "@temporalio/client";
import { startWorker } from "../../src/adapters/temporal/worker.ts";
import { serveRequests, stopOnSignal } from "../lib/processes.ts";

const address = process.env.TEMPORAL_ADDRESS;
const taskQueue = process.env.TASK_QUEUE;
if (!address || !taskQueue) throw new Error("set TEMPORAL_ADDRESS and TASK_QUEUE");

const worker = await startWorker({
  address,
  namespace: "default",
  taskQueue,
  activities: { emptyActivity: async () => {} },
  workflowsPath: path.join(import.meta.dirname, "workflows", "empty.ts"),
  maxConcurrentActivityTaskExecutions: Number(process.env.MAX_ACTIVITIES ?? 8),
});
const connection = await Connection.connect({ address });
const client = new Client({ connection, namespace: "default" });

serveRequests(async (message) => {
  const count = Number(message.batch);
  const concurrency = Number(message.concurrency ?? 32);
  const handles: WorkflowHandle[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count; i = next++) {
        handles.push(await client.workflow.start("emptyWorkflow", { taskQueue, workflowId: `bench-empty-${randomUUID()}` }));
      }
    }),
  );
  // One result at a time: the batch is done when the last one is, and one
  // long poll at a time spares the server hundreds of concurrent ones (the
  // service's batch is watched with a database query, not long polls).
  for (const handle of handles) await handle.result();
  return (performance.now() - started) / 1000;
});

stopOnSignal(async () => {
  await worker.stop();
  await connection.close();
});
