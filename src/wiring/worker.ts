import type { Config } from "../config.ts";
import { createMessageActivities } from "../adapters/temporal/messages/activities.ts";
import { createCampaignActivities } from "../adapters/temporal/campaigns/activities.ts";
import { createWebhookDeliveryActivities } from "../adapters/temporal/webhooks/activities.ts";
import { createDomainCheckActivities } from "../adapters/temporal/domains/activities.ts";
import type { AttemptResult } from "../capabilities/webhooks/index.ts";
import { type RunningWorker, startWorker } from "../adapters/temporal/worker.ts";
import { createWorkerMetrics, type WorkerMetrics } from "../adapters/metrics/worker-metrics.ts";
import { postgresProbe } from "../adapters/metrics/readiness-probes.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { type Readiness, readinessOf } from "../transport/http/health.ts";
import { openSendingCore, type SendingCore, type ServiceLog } from "./services.ts";
import type { WebhookDeliveryOptions } from "./webhooks.ts";
import type { CampaignMessageDecorator } from "../capabilities/campaigns/ports.ts";

/**
 * The composition root of a Temporal worker: the sending core on a pool of
 * its own and the worker with every capability's activities, its metrics
 * and its readiness, and the webhook outbox relay, which starts each
 * delivery's workflow through this worker's own connection with eager
 * start: the first workflow task comes back in the start's answer and this
 * worker runs it at once, the first attempt included, instead of waiting
 * for a poll. It loads no Fastify, authentication, rate
 * limiting or idempotency. Used by `npm run worker` (src/worker-main.ts,
 * which serves the metrics and readiness on a listener of its own) and, unless
 * RUN_WORKER=false, by the API process (api.ts), where the separate pool
 * keeps a burst of handoffs from starving the requests.
 */
export interface WorkerProcess {
  readonly core: SendingCore;
  /** This worker's own counters (activities, webhook attempts, pool). */
  readonly metrics: WorkerMetrics;
  /** PostgreSQL, Temporal (over the worker's connection) and the worker still polling. */
  readonly readiness: Readiness;
  /** What the worker is doing now (graceful shutdown reports it). */
  status(): ReturnType<RunningWorker["status"]>;
  /** Stops polling, lets activities under way finish (see shutdownGraceMs), closes the pool. */
  stop(): Promise<void>;
}

export interface WorkerProcessOptions {
  /** Node's process metrics in `metrics` (a worker process of its own; the API process has them already). */
  readonly processMetrics?: boolean;
  /** How webhook deliveries reach receivers (src/wiring/webhooks.ts); default: the spec's. */
  readonly webhookDelivery?: WebhookDeliveryOptions;
  /** Adds tracking and List-Unsubscribe to campaign copies; default: the plain decorator (src/wiring/campaigns.ts). */
  readonly campaignDecorator?: CampaignMessageDecorator;
}

/** Each readiness check's longest wait (as the API's). */
const READINESS_TIMEOUT_MS = 2000;

/**
 * How much of SHUTDOWN_TIMEOUT_MS activities under way get to finish before
 * they are cancelled: the rest lets them report, and the pool close, before
 * the process gives up waiting.
 */
export function activityGraceMs(shutdownTimeoutMs: number): number {
  return Math.floor(shutdownTimeoutMs * 0.8);
}

/** A webhook attempt's outcome, with the labels of the API's mail_webhook_attempts gauge. */
function attemptOutcome(result: AttemptResult): string {
  if (result.state === "gone") return "gone";
  if (result.status !== undefined) return result.status >= 200 && result.status <= 299 ? "success" : "http_error";
  return result.errorClass ?? "error";
}

export async function startWorkerProcess(
  config: Config,
  databaseUrl: string,
  log: ServiceLog,
  options: WorkerProcessOptions = {},
): Promise<WorkerProcess> {
  if (!config.temporalAddress) throw new Error("no Temporal address: set TEMPORAL_ADDRESS");
  const workerPoolMax = config.workerPoolMax;
  const core = await openSendingCore(databaseUrl, config, log, {
    poolMax: workerPoolMax,
    ...(options.webhookDelivery ? { webhookDelivery: options.webhookDelivery } : {}),
    ...(options.campaignDecorator ? { campaignDecorator: options.campaignDecorator } : {}),
  });
  const pool = poolOf(core.orm);
  const metrics = createWorkerMetrics({
    processMetrics: options.processMetrics ?? false,
    async pool() {
      const p = await pool();
      return { total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount, max: workerPoolMax };
    },
    onError: (error) => log.warn({ err: error }, "a worker metrics gauge could not be read"),
  });
  const webhookActivities = createWebhookDeliveryActivities({
    attempts: core.webhooks.webhooks.attempts,
    observe: (result) => metrics.webhookAttempt(attemptOutcome(result)),
  });
  let worker: RunningWorker;
  try {
    worker = await startWorker({
      address: config.temporalAddress,
      tls: config.temporalTls,
      apiKey: config.temporalApiKey,
      namespace: config.temporalNamespace,
      taskQueue: config.temporalTaskQueue,
      activities: {
        ...createMessageActivities({ lifecycle: core.messaging.lifecycle }),
        ...createCampaignActivities({ sending: core.campaigns.sending }),
        ...webhookActivities,
        ...createDomainCheckActivities({ domains: core.sendingSetup.domains }),
      },
      // Below the pool, so activities never wait for a connection held by
      // their own siblings and a little room stays for the relay.
      maxConcurrentActivityTaskExecutions: Math.max(1, workerPoolMax - 2),
      // Webhook attempts and the message's `deferred` mark are local activities, on the same pool.
      maxConcurrentLocalActivityExecutions: Math.max(1, workerPoolMax - 2),
      shutdownGraceMs: activityGraceMs(config.shutdownTimeoutMs),
      activityInterceptors: [metrics.activityInterceptor],
    });
  } catch (error) {
    await core.close();
    throw error;
  }
  const readiness = readinessOf(
    {
      postgres: postgresProbe(pool),
      temporal: () => worker.pingTemporal(),
      worker: async () => {
        const { state } = worker.status();
        if (state !== "RUNNING") throw new Error(`the worker is ${state.toLowerCase()}, not polling`);
      },
    },
    READINESS_TIMEOUT_MS,
  );
  const relay = core.webhooks.dispatcher;
  relay.startThrough(worker.client);
  relay.startRelay();
  let stopped: Promise<void> | undefined;
  return {
    core,
    metrics,
    readiness,
    status: () => worker.status(),
    stop() {
      stopped ??= (async () => {
        // The relay first: it starts through the worker's connection, which worker.stop() closes.
        await relay.close();
        await worker.stop();
        await core.close();
      })();
      return stopped;
    },
  };
}
