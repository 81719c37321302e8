import path from "node:path";
import { fileURLToPath } from "node:url";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  type ActivityInterceptorsFactory,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundle,
} from "@temporalio/worker";
import { Client } from "@temporalio/client";
import { type TemporalConnectionSettings, temporalConnectionOptions } from "./client.ts";

/**
 * The Temporal worker of a process: every capability's workflows (one
 * bundle of workflows/index.ts) and activities on one task queue. The
 * worker knows no capability: the composition root passes the activity
 * sets, each built by the capability's module in src/adapters/temporal/<capability>/.
 */

/** workflows/index.ts, which exports the workflows of every capability. */
export const WORKFLOWS_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../workflows/index.ts");

const bundles = new Map<string, Promise<WorkflowBundle>>();
const execFileAsync = promisify(execFile);

/** The program that bundles (see there why in a process of its own). */
const BUNDLE_PROGRAM = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "bundle-process.ts");

/** Type stripping is on by default in Node 24; its warning is not news. */
const BUNDLE_NODE_OPTIONS = ["--disable-warning=ExperimentalWarning"];

/** Runs webpack in a child process and answers the bundle; the child's memory is the system's again when it ends. */
async function bundleInChild(workflowsPath: string): Promise<WorkflowBundle> {
  const { stdout, stderr } = await execFileAsync(process.execPath, [...BUNDLE_NODE_OPTIONS, BUNDLE_PROGRAM, workflowsPath], {
    maxBuffer: 256 * 1024 * 1024,
    encoding: "utf8",
  });
  // The bundler's warnings (its only other output), as they were printed when it ran in this process.
  if (stderr) process.stderr.write(stderr);
  return { code: stdout };
}

/** The workflow code at `workflowsPath`, bundled once per process (webpack takes a few seconds). */
export function workflowBundle(workflowsPath: string = WORKFLOWS_PATH): Promise<WorkflowBundle> {
  let bundle = bundles.get(workflowsPath);
  if (bundle === undefined) {
    bundle = bundleInChild(workflowsPath);
    // A failed bundle is not kept: the next worker tries again.
    bundle.catch(() => bundles.delete(workflowsPath));
    bundles.set(workflowsPath, bundle);
  }
  return bundle;
}

/**
 * The Temporal SDK's runtime of this process, installed once before any
 * worker exists (entries only: tests run many workers in one process):
 *
 * - `metricsAddress`: the SDK's own metrics (task slots, poll and
 *   schedule-to-start latencies, sticky cache, requests to the server...)
 *   served by its Prometheus exporter at http://<metricsAddress>/metrics;
 * - no signal handlers of its own: the entry decides the order of a
 *   graceful shutdown (the SDK's default stops workers at SIGTERM by itself).
 */
export function installTemporalRuntime(options: { readonly metricsAddress?: string | undefined }): void {
  Runtime.install({
    shutdownSignals: [],
    ...(options.metricsAddress !== undefined
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: options.metricsAddress } } } }
      : {}),
  });
}

export interface WorkerOptions extends TemporalConnectionSettings {
  readonly namespace: string;
  readonly taskQueue: string;
  /**
   * Every capability's activities in one object, e.g.
   * `{ ...createMessageActivities({ lifecycle }), ...createWebhookActivities(...) }`;
   * a workflow calls them by name, so names are unique across capabilities.
   */
  readonly activities: object;
  /** The workflows to register. Default: WORKFLOWS_PATH (every capability's). */
  readonly workflowsPath?: string;
  /** Activities run at once by this worker; keep it below the activities' database pool. */
  readonly maxConcurrentActivityTaskExecutions?: number;
  /**
   * Local activities run at once by this worker (the SDK's default is 100).
   * They use the same database pool as the activities: webhook attempts are
   * local activities (workflows/webhooks/delivery.ts), so bound them the same way.
   */
  readonly maxConcurrentLocalActivityExecutions?: number;
  /**
   * After stop(): how long activities under way may take to finish before
   * they are cancelled (and retried by Temporal on another worker). Default 0.
   */
  readonly shutdownGraceMs?: number;
  /** Seen by every activity execution (metrics). */
  readonly activityInterceptors?: readonly ActivityInterceptorsFactory[];
  /** Workflows kept in memory between their tasks. Default DEFAULT_MAX_CACHED_WORKFLOWS. */
  readonly maxCachedWorkflows?: number;
}

/**
 * The SDK sizes its workflow cache from the heap limit (about 600 workflows
 * per GB, some 2,000 on a common machine), and a message workflow stays
 * open for its outcome window (days), so under a steady stream of sends the
 * cache grows to gigabytes. Bounded here: a workflow pushed out of the cache
 * replays its short history (a dozen events) when its next task comes.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 250;

export interface WorkerStatus {
  /** The SDK's state: RUNNING while polling; STOPPING, DRAINING... once stopped. */
  readonly state: string;
  readonly activitiesInFlight: number;
  readonly workflowTasksInFlight: number;
}

export interface RunningWorker {
  /** Stops polling, lets the tasks under way finish (within the grace time), closes the connection. Idempotent. */
  stop(): Promise<void>;
  status(): WorkerStatus;
  /** Asks the Temporal frontend for its system info over the worker's own connection (readiness). */
  pingTemporal(): Promise<unknown>;
  /**
   * A client over the worker's own connection, usable until stop(). A
   * workflow started through it with `requestEagerStart` on this worker's
   * task queue may get its first workflow task in the start's answer, run
   * by this worker at once, instead of through the task queue and a poll.
   */
  readonly client: Client;
}

/** Past the grace time, cancelled activities get this long to report before the worker gives up on them. */
const FORCE_AFTER_GRACE_MS = 5_000;

/** Runs the worker until stopped. Rejects if Temporal cannot be reached. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const bundle = workflowBundle(options.workflowsPath);
  const connection = await NativeConnection.connect({ address: options.address, ...temporalConnectionOptions(options) });
  const graceMs = options.shutdownGraceMs ?? 0;
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace: options.namespace,
      taskQueue: options.taskQueue,
      workflowBundle: await bundle,
      activities: options.activities,
      shutdownGraceTime: graceMs,
      // A bound even when an activity ignores its cancellation.
      shutdownForceTime: graceMs + FORCE_AFTER_GRACE_MS,
      ...(options.activityInterceptors ? { interceptors: { activity: [...options.activityInterceptors] } } : {}),
      maxCachedWorkflows: options.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
      ...(options.maxConcurrentActivityTaskExecutions !== undefined
        ? { maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions }
        : {}),
      ...(options.maxConcurrentLocalActivityExecutions !== undefined
        ? { maxConcurrentLocalActivityExecutions: options.maxConcurrentLocalActivityExecutions }
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
    status() {
      const status = worker.getStatus();
      return {
        state: status.runState,
        activitiesInFlight: status.numInFlightActivities,
        workflowTasksInFlight: status.numInFlightWorkflowActivations,
      };
    },
    pingTemporal: () => connection.workflowService.getSystemInfo({}),
    client: new Client({ connection, namespace: options.namespace }),
  };
}
