/**
 * `node src/worker-main.ts` with the tests' webhook delivery options, for
 * tests that kill and restart a worker process. The production entry refuses loopback
 * targets and trusts only public certificate authorities (by design, with
 * no switch in the environment); this one is the same worker
 * (startWorkerProcess, configured from the environment like worker-main)
 * plus, in code, the options that let it reach the test's HTTPS receiver
 * on 127.0.0.1:
 *
 *   node test/webhooks/worker-for-tests.ts <test CA certificate file>
 */
import { readFileSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { startWorkerProcess } from "../../src/wiring/worker.ts";
import { SHORT_SCHEDULE, testResolver } from "./api-support.ts";

async function main(): Promise<void> {
  const [caFile] = process.argv.slice(2);
  if (!caFile) throw new Error("usage: worker-for-tests.ts <CA certificate file>");
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error("set DATABASE_URL");
  const worker = await startWorkerProcess(config, config.databaseUrl, { warn: (details, message) => console.warn(message, details) }, {
    webhookDelivery: {
      resolver: testResolver(),
      allowLoopback: true,
      trustedCa: readFileSync(caFile, "utf8"),
      receiverTimeoutMs: 3_000,
      // The relay runs here, beside the worker: it hands each delivery the tests' short retry schedule.
      schedule: SHORT_SCHEDULE,
    },
  });
  console.log(`worker running on task queue ${config.temporalTaskQueue}`);
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
