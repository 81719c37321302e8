import type { Config } from "../config.ts";
import { createMessageActivities } from "../adapters/temporal/messages/activities.ts";
import { type RunningWorker, startWorker } from "../adapters/temporal/worker.ts";
import { openSendingCore, type SendingCore, type ServiceLog } from "./services.ts";
import type { WebhooksTestOverrides } from "./webhooks.ts";

/**
 * The composition root of a Temporal worker: the sending core on a pool of
 * its own and the worker with every capability's activities. It loads no
 * Fastify, authentication, rate limiting or idempotency. Used by
 * `npm run worker` (src/worker-main.ts) and, unless RUN_WORKER=false, by
 * the API process (api.ts), where the separate pool keeps a burst of
 * handoffs from starving the requests.
 */
export interface WorkerProcess {
  readonly core: SendingCore;
  stop(): Promise<void>;
}

export async function startWorkerProcess(
  config: Config,
  databaseUrl: string,
  log: ServiceLog,
  webhooksTestOverrides?: WebhooksTestOverrides,
): Promise<WorkerProcess> {
  if (!config.temporalAddress) throw new Error("no Temporal address: set TEMPORAL_ADDRESS");
  const workerPoolMax = config.workerPoolMax;
  const core = await openSendingCore(databaseUrl, config, log, {
    poolMax: workerPoolMax,
    ...(webhooksTestOverrides ? { webhooksTestOverrides } : {}),
  });
  let worker: RunningWorker;
  try {
    worker = await startWorker({
      address: config.temporalAddress,
      namespace: config.temporalNamespace,
      taskQueue: config.temporalTaskQueue,
      activities: {
        ...createMessageActivities(core.messaging.lifecycle, core.messaging.pace),
        ...core.webhooks.activities,
      },
      // Below the pool, so activities never wait for a connection held by
      // their own siblings and a little room stays for the relay.
      maxConcurrentActivityTaskExecutions: Math.max(1, workerPoolMax - 2),
    });
  } catch (error) {
    await core.close();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    core,
    stop() {
      stopped ??= (async () => {
        await worker.stop();
        await core.close();
      })();
      return stopped;
    },
  };
}
