/**
 * `npm run worker`: a worker-only process (no API listeners), for running
 * more workers than API processes. Needs DATABASE_URL and TEMPORAL_ADDRESS.
 * Stops gracefully on SIGTERM / SIGINT: the activity under way finishes or
 * is retried by another worker. Built by src/wiring/worker.ts, which loads
 * no HTTP stack.
 */
import { loadConfig } from "./config.ts";
import { startWorkerProcess } from "./wiring/worker.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error("set DATABASE_URL");
  const worker = await startWorkerProcess(config, config.databaseUrl, { warn: (details, message) => console.warn(message, details) });
  console.log(`worker running on task queue ${config.temporalTaskQueue} at ${config.temporalAddress}`);
  const stop = async () => {
    await worker.stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
