import { CancelledFailure } from "@temporalio/common";
import type { ActivityInterceptorsFactory } from "@temporalio/worker";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * A worker process's own Prometheus metrics, served by its listener's
 * GET /metrics (src/transport/operator/worker-listener.ts): what this
 * process did, where the API's /metrics reads totals from the database.
 *
 * - mail_worker_activities_total{activity, outcome}: executions that ended
 *   completed, failed (Temporal retries them) or cancelled (the worker
 *   stopping, a heartbeat timeout);
 * - mail_worker_activity_duration_seconds{activity};
 * - mail_worker_activities_in_flight{activity};
 * - mail_worker_webhook_attempts_total{outcome}: webhook delivery attempts
 *   answered by this worker (success, http_error, an error class, gone);
 * - mail_db_pool_connections{state}: this process's PostgreSQL pool;
 * - Node's process metrics (processMetrics).
 *
 * The Temporal SDK's own metrics (task slots, pollers, latencies) come from
 * its Prometheus exporter (TEMPORAL_METRICS_ADDRESS), a second target.
 */
export interface PoolUse {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
  readonly max: number;
}

export interface WorkerMetrics {
  readonly registry: Registry;
  /** For Worker.create: counts every activity execution of the worker. */
  readonly activityInterceptor: ActivityInterceptorsFactory;
  /** One webhook delivery attempt's outcome. */
  webhookAttempt(outcome: string): void;
  scrape(): Promise<{ contentType: string; body: string }>;
}

export interface WorkerMetricsOptions {
  /** The worker's PostgreSQL pool, read at scrape time. */
  readonly pool: () => Promise<PoolUse>;
  /** Node's default process metrics (a worker process; not a worker inside the API process, whose /metrics has them). */
  readonly processMetrics: boolean;
  readonly onError?: (error: unknown) => void;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

function outcomeOf(error: unknown): "failed" | "cancelled" {
  return error instanceof CancelledFailure || (error instanceof Error && error.name === "AbortError") ? "cancelled" : "failed";
}

export function createWorkerMetrics(options: WorkerMetricsOptions): WorkerMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const activities = new Counter({
    name: "mail_worker_activities_total",
    help: "Activity executions of this worker by activity and outcome (completed, failed, cancelled).",
    labelNames: ["activity", "outcome"],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: "mail_worker_activity_duration_seconds",
    help: "Activity execution time in this worker by activity.",
    labelNames: ["activity"],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: "mail_worker_activities_in_flight",
    help: "Activities this worker is executing now, by activity.",
    labelNames: ["activity"],
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: "mail_worker_webhook_attempts_total",
    help: "Webhook delivery attempts answered by this worker, by outcome (success, http_error, an error class such as timeout, gone).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  new Gauge({
    name: "mail_db_pool_connections",
    help: "Connections of this worker's PostgreSQL pool: total, idle, waiting (callers waiting for one), max.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const pool = await options.pool();
        for (const state of ["total", "idle", "waiting", "max"] as const) this.set({ state }, pool[state]);
      } catch (error) {
        options.onError?.(error);
      }
    },
  });

  const activityInterceptor: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      async execute(input, next) {
        const activity = ctx.info.activityType;
        inFlight.inc({ activity });
        const stop = seconds.startTimer({ activity });
        try {
          const result = await next(input);
          activities.inc({ activity, outcome: "completed" });
          return result;
        } catch (error) {
          activities.inc({ activity, outcome: outcomeOf(error) });
          throw error;
        } finally {
          stop();
          inFlight.dec({ activity });
        }
      },
    },
  });

  return {
    registry,
    activityInterceptor,
    webhookAttempt: (outcome) => webhookAttempts.inc({ outcome }),
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
