/**
 * A worker of the empty workflow (bench/hot-path/empty/workflows.ts), as a
 * process of its own like the service's worker:
 *
 *   node bench/hot-path/empty/worker.ts <temporal-address> <task-queue>
 *
 * Prints `empty worker running` once polling; SIGINT stops it.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, NativeConnection, Worker } from "@temporalio/worker";
import { emptyActivities } from "./activities.ts";

const [address, taskQueue] = process.argv.slice(2);
if (!address || !taskQueue) throw new Error("usage: worker.ts <temporal-address> <task-queue>");
const workflowsPath = path.join(path.dirname(fileURLToPath(import.meta.url)), "workflows.ts");
const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection,
  taskQueue,
  workflowBundle: await bundleWorkflowCode({ workflowsPath, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } }),
  activities: emptyActivities,
});
const running = worker.run();
console.log("empty worker running");
process.once("SIGINT", () => {
  worker.shutdown();
  void running.finally(() => connection.close().finally(() => process.exit(0)));
});
