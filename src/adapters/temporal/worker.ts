import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from "@temporalio/worker";
import { createMessageActivities } from "./messages/activities.ts";
import type { MessageLifecycle } from "../../capabilities/messages/lifecycle/message-lifecycle.ts";
import type { SendingPace } from "../../capabilities/messages/lifecycle/sending-pace.ts";

const WORKFLOWS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../workflows/index.ts");

let bundle: Promise<WorkflowBundle> | undefined;

/** The workflow code, bundled once per process (webpack takes a few seconds). */
function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: quietBundlerLogger });
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

export interface MessageWorkerOptions {
  readonly address: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly lifecycle: MessageLifecycle;
  readonly pace: SendingPace;
}

export interface RunningWorker {
  stop(): Promise<void>;
}

/** Runs the worker of message workflows and their activities until stopped. */
export async function startMessageWorker(options: MessageWorkerOptions): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createMessageActivities(options.lifecycle, options.pace),
  });
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
