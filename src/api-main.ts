/**
 * The API process of a deployment (the container's default command): the
 * listeners and the outbox relay on an external PostgreSQL (DATABASE_URL)
 * and Temporal cluster (TEMPORAL_ADDRESS), with the worker too unless
 * RUN_WORKER=false (docker-compose.yml runs workers as `src/worker-main.ts`).
 *
 * Unlike `npm start` (src/main.ts) it starts no embedded server, seeds
 * nothing and prints no secret. It registers the workflows' search
 * attributes before accepting requests, since a workflow that sets one the
 * cluster lacks cannot start. SIGTERM / SIGINT: graceful shutdown.
 */
import { startApp } from "./wiring/api.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { ensureSearchAttributes } from "./runtime/temporal-dev-server.ts";

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
  if (config.mode === "production" && config.emailProvider === "simulator") {
    console.warn("EMAIL_PROVIDER is simulator: messages are accepted but never leave this service (set EMAIL_PROVIDER=smtp)");
  }

  await ensureSearchAttributes(temporalAddress, config.temporalNamespace);
  const app = await startApp({ config, databaseUrl });
  console.log(
    `API listening: ${app.httpUrl} (HTTP/1.1), ${app.grpcUrl} (h2c), operator ${app.operatorUrl}; ` +
      `Temporal ${temporalAddress} namespace ${config.temporalNamespace}, worker ${config.runWorker ? "in process" : "separate"}`,
  );

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    try {
      await app.close();
    } catch (error) {
      console.error("error during shutdown", error);
    }
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
