/**
 * `npm run worker`: a worker-only process (no API listeners), for running
 * more workers than API processes. Needs DATABASE_URL and TEMPORAL_ADDRESS
 * (and, for a cluster with TLS or Temporal Cloud, the TEMPORAL_TLS_* /
 * TEMPORAL_API_KEY settings). Built by src/wiring/worker.ts, which loads no
 * HTTP stack.
 *
 * - A small listener of its own (WORKER_OPERATOR_HOST:WORKER_OPERATOR_PORT,
 *   default 127.0.0.1:8083): /livez, /readyz (PostgreSQL, Temporal, the
 *   worker polling), /metrics (this worker's counters).
 * - The Temporal SDK's own metrics on TEMPORAL_METRICS_ADDRESS when set.
 * - SIGTERM / SIGINT: stops polling, lets the activities under way finish
 *   (cancelled past 80 % of SHUTDOWN_TIMEOUT_MS; Temporal retries them on
 *   another worker), closes the pool, logs one line (src/wiring/shutdown.ts).
 */
import { ConfigError, loadConfig, startupWarnings } from "./config.ts";
import { installTemporalRuntime } from "./adapters/temporal/worker.ts";
import { startWorkerListener } from "./transport/operator/worker-listener.ts";
import { shutDownOnSignals } from "./wiring/shutdown.ts";
import { startWorkerProcess } from "./wiring/worker.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const { databaseUrl, temporalAddress } = config;
  if (!databaseUrl || !temporalAddress) {
    const missing = { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress };
    throw new ConfigError(
      config.mode,
      Object.entries(missing)
        .filter(([, value]) => !value)
        .map(([name]) => `${name} is not set: a worker connects to an existing PostgreSQL and Temporal`),
    );
  }
  for (const warning of startupWarnings(config)) console.warn(warning);
  // Before any connection exists: the SDK's metrics exporter, and no signal handling of its own.
  installTemporalRuntime({ metricsAddress: config.temporalMetricsAddress });
  const log = { warn: (details: Record<string, unknown>, message: string) => console.warn(message, details) };
  const worker = await startWorkerProcess(config, databaseUrl, log, { processMetrics: true });
  let listener;
  try {
    listener = await startWorkerListener({
      host: config.workerOperatorHost,
      port: config.workerOperatorPort,
      readiness: worker.readiness,
      scrape: () => worker.metrics.scrape(),
      onError: (error) => log.warn({ err: error }, "the worker listener could not answer"),
    });
  } catch (error) {
    await worker.stop();
    throw error;
  }
  // Before the ready line: whoever reads it may signal at once.
  const running = listener;
  shutDownOnSignals(
    {
      inFlight: () => {
        const status = worker.status();
        return { activities: status.activitiesInFlight, workflowTasks: status.workflowTasksInFlight };
      },
      async close() {
        // /readyz answers 503 (not polling) while the activities finish; the listener goes last.
        await worker.stop();
        await running.close();
      },
    },
    { timeoutMs: config.shutdownTimeoutMs, process: "worker" },
  );
  const sdkMetrics = config.temporalMetricsAddress ? `, Temporal SDK metrics http://${config.temporalMetricsAddress}/metrics` : "";
  console.log(
    `worker running on task queue ${config.temporalTaskQueue} at ${temporalAddress} namespace ${config.temporalNamespace}; ` +
      `operator ${listener.url} (/livez, /readyz, /metrics)${sdkMetrics}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
