/**
 * The API process of a deployment (the container's default command): the
 * listeners and the outbox relay on an external PostgreSQL (DATABASE_URL)
 * and Temporal cluster (TEMPORAL_ADDRESS), with the worker too unless
 * RUN_WORKER=false (docker-compose.yml runs workers as `src/worker-main.ts`).
 *
 * Unlike `npm start` (src/main.ts) it starts no embedded server, seeds
 * nothing and prints no secret. It registers the workflows' search
 * attributes before accepting requests, since a workflow that sets one the
 * cluster lacks cannot start. SIGTERM / SIGINT: graceful shutdown (the
 * listeners stop accepting, requests in flight are answered, the in-process
 * worker's activities finish, the pools close) within SHUTDOWN_TIMEOUT_MS,
 * logged in one line (src/wiring/shutdown.ts).
 */
import { startApp } from "./wiring/api.ts";
import { shutDownOnSignals } from "./wiring/shutdown.ts";
import { ConfigError, loadConfig, startupWarnings } from "./config.ts";
import { registerSearchAttributes } from "./wiring/search-attributes.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  // Production mode refuses these already; development mode (a local trial
  // of this entry) gets the same rule, since nothing here would start them.
  const { databaseUrl, temporalAddress } = config;
  if (!databaseUrl || !temporalAddress) {
    const missing = { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress };
    const problems = Object.entries(missing).filter(([, value]) => !value);
    throw new ConfigError(
      config.mode,
      problems.map(([name]) => `${name} is not set: this entry starts no embedded server (\`npm start\` does)`),
    );
  }
  for (const warning of startupWarnings(config)) console.warn(warning);

  // Before any worker exists: the SDK's metrics exporter, and no signal handling of its own.
  // The worker SDK is loaded only when this process runs a worker.
  if (config.runWorker) {
    const { installTemporalRuntime } = await import("./adapters/temporal/worker.ts");
    installTemporalRuntime({ metricsAddress: config.temporalMetricsAddress });
  }
  await registerSearchAttributes(config, temporalAddress, (line) => console.warn(line));
  const app = await startApp({ config, databaseUrl });
  // Before the ready line: whoever reads it may signal at once.
  shutDownOnSignals(app, { timeoutMs: config.shutdownTimeoutMs, process: "api" });
  console.log(
    `API listening: ${app.httpUrl} (HTTP/1.1), ${app.grpcUrl} (h2c), operator ${app.operatorUrl}; ` +
      `Temporal ${temporalAddress} namespace ${config.temporalNamespace}, worker ${config.runWorker ? "in process" : "separate"}`,
  );
  if (config.runWorker && config.temporalMetricsAddress) {
    console.log(`Temporal SDK metrics: http://${config.temporalMetricsAddress}/metrics`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
