/**
 * The worker process of the benchmark: what src/worker-main.ts does (same
 * configuration, same composition root src/wiring/worker.ts, same listener,
 * metrics and graceful shutdown), plus the webhook delivery options that let
 * it post to the benchmark's HTTPS receiver: the host BENCH_HOOK_HOST
 * resolves to 127.0.0.1, loopback is allowed, and the receiver's
 * self-signed certificate (BENCH_HOOK_CA_FILE) is trusted. The options
 * exist in code only, never in a deployment's configuration, which is why
 * this is a file of its own; keep it in step with src/worker-main.ts.
 */
import { readFileSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { installTemporalRuntime } from "../../src/adapters/temporal/worker.ts";
import { startWorkerListener } from "../../src/transport/operator/worker-listener.ts";
import { shutDownOnSignals } from "../../src/wiring/shutdown.ts";
import { startWorkerProcess } from "../../src/wiring/worker.ts";

const host = process.env.BENCH_HOOK_HOST;
const caFile = process.env.BENCH_HOOK_CA_FILE;
if (!host || !caFile) throw new Error("set BENCH_HOOK_HOST and BENCH_HOOK_CA_FILE (bench/run.ts does)");

const config = loadConfig();
if (!config.databaseUrl || !config.temporalAddress) throw new Error("set DATABASE_URL and TEMPORAL_ADDRESS");
installTemporalRuntime({ metricsAddress: config.temporalMetricsAddress });
const log = { warn: (details: Record<string, unknown>, message: string) => console.warn(message, details) };
const worker = await startWorkerProcess(config, config.databaseUrl, log, {
  webhookDelivery: {
    resolver: {
      resolve: async (hostname) => {
        if (hostname !== host) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        return [{ address: "127.0.0.1", family: 4 }];
      },
    },
    allowLoopback: true,
    trustedCa: readFileSync(caFile, "utf8"),
  },
  processMetrics: true,
});
const listener = await startWorkerListener({
  host: config.workerOperatorHost,
  port: config.workerOperatorPort,
  readiness: worker.readiness,
  scrape: () => worker.metrics.scrape(),
  onError: (error) => log.warn({ err: error }, "the worker listener could not answer"),
});
console.log(`worker running on task queue ${config.temporalTaskQueue} at ${config.temporalAddress}; operator ${listener.url}`);
shutDownOnSignals(
  {
    inFlight: () => {
      const status = worker.status();
      return { activities: status.activitiesInFlight, workflowTasks: status.workflowTasksInFlight };
    },
    async close() {
      await worker.stop();
      await listener.close();
    },
  },
  { timeoutMs: config.shutdownTimeoutMs, process: "worker" },
);
