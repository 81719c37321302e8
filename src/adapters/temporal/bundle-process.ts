/**
 * `node bundle-process.ts <workflowsPath>`: bundles the workflow code and
 * writes it to standard output. src/adapters/temporal/worker.ts runs it as a
 * child process: webpack's memory (well over a hundred megabytes, which a
 * long-running worker's process would otherwise keep) goes away with it.
 */
import { bundleWorkflowCode } from "@temporalio/worker";

const workflowsPath = process.argv[2];
if (!workflowsPath) throw new Error("usage: bundle-process.ts <workflowsPath>");
const { code } = await bundleWorkflowCode({
  workflowsPath,
  logger: {
    log() {},
    trace() {},
    debug() {},
    info() {},
    warn(message: string, meta?: Record<string, unknown>) {
      console.error(message, meta ?? "");
    },
    error(message: string, meta?: Record<string, unknown>) {
      console.error(message, meta ?? "");
    },
  },
});
process.stdout.write(code);
