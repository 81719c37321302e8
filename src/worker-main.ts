/**
 * `npm run worker`: a worker-only process (no API listeners), for running
 * more workers than API processes. Needs DATABASE_URL and TEMPORAL_ADDRESS.
 * Stops gracefully on SIGTERM / SIGINT: the activity under way finishes or
 * is retried by another worker.
 */
import { startWorkerFor } from "./wiring/api.ts";
import { loadConfig } from "./config.ts";
import { openServices } from "./wiring/services.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error("set DATABASE_URL");
  const services = await openServices(config.databaseUrl, config, { warn: (details, message) => console.warn(message, details) });
  const worker = await startWorkerFor(config, services);
  console.log(`worker running on task queue ${config.temporalTaskQueue} at ${config.temporalAddress}`);
  const stop = async () => {
    await worker.stop();
    await services.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
