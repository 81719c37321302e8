import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from "@temporalio/worker";

/**
 * The Temporal worker of a process: every capability's workflows (one
 * bundle of workflows/index.ts) and activities on one task queue. The
 * worker knows no capability: the composition root passes the activity
 * sets, each built by the capability's module in src/adapters/temporal/<capability>/.
 */

/** workflows/index.ts, which exports the workflows of every capability. */
export const WORKFLOWS_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../workflows/index.ts");

const bundles = new Map<string, Promise<WorkflowBundle>>();

/** The workflow code at `workflowsPath`, bundled once per process (webpack takes a few seconds). */
export function workflowBundle(workflowsPath: string = WORKFLOWS_PATH): Promise<WorkflowBundle> {
  let bundle = bundles.get(workflowsPath);
  if (bundle === undefined) {
    bundle = bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
    // A failed bundle is not kept: the next worker tries again.
    bundle.catch(() => bundles.delete(workflowsPath));
    bundles.set(workflowsPath, bundle);
  }
  return bundle;
}

const quietBundlerLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn(message: string, meta?: Record<string, unknown>) {
    console.warn(message, meta ?? "");
  },
  error(message: string, meta?: Record<string, unknown>) {
    console.error(message, meta ?? "");
  },
};

export interface WorkerOptions {
  /** host:port of the Temporal frontend. */
  readonly address: string;
  readonly namespace: string;
  readonly taskQueue: string;
  /**
   * Every capability's activities in one object, e.g.
   * `{ ...createMessageActivities(lifecycle, pace), ...createWebhookActivities(...) }`;
   * a workflow calls them by name, so names are unique across capabilities.
   */
  readonly activities: object;
  /** The workflows to register. Default: WORKFLOWS_PATH (every capability's). */
  readonly workflowsPath?: string;
  /** Activities run at once by this worker; keep it below the activities' database pool. */
  readonly maxConcurrentActivityTaskExecutions?: number;
}

export interface RunningWorker {
  /** Stops polling, lets the tasks under way finish, closes the connection. Idempotent. */
  stop(): Promise<void>;
}

/** Runs the worker until stopped. Rejects if Temporal cannot be reached. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const bundle = workflowBundle(options.workflowsPath);
  const connection = await NativeConnection.connect({ address: options.address });
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace: options.namespace,
      taskQueue: options.taskQueue,
      workflowBundle: await bundle,
      activities: options.activities,
      ...(options.maxConcurrentActivityTaskExecutions !== undefined
        ? { maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions }
        : {}),
    });
  } catch (error) {
    await connection.close();
    throw error;
  }
  const running = worker.run();
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        if (worker.getState() === "RUNNING") worker.shutdown();
        await running.catch(() => undefined);
        await connection.close();
      })();
      return stopped;
    },
  };
}
