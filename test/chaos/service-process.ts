/**
 * The API process or a worker process of the chaos suite, as a child
 * process the suite can SIGKILL:
 *
 *   node test/chaos/service-process.ts api|worker <test CA certificate file>
 *
 * Each is its production entry (src/api-main.ts, src/worker-main.ts: the
 * same composition roots, configured from the environment the same way)
 * plus, in code, the webhook delivery options: the production entries refuse
 * loopback targets and trust only public certificate authorities, with no
 * switch in the environment by design (src/wiring/webhooks.ts), so they
 * could never reach the suite's HTTPS receiver on 127.0.0.1. The API
 * process also gets the shortened retry schedule its outbox relay hands
 * to each delivery workflow (spec: 1 min, 5 min, 15 min, 1 h; here 1 s).
 *
 * Prints `ready` on stdout once it serves (API) or polls (worker).
 */
import { readFileSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { ensureSearchAttributes } from "../../src/runtime/temporal-dev-server.ts";
import { startApp } from "../../src/wiring/api.ts";
import type { WebhookDeliveryOptions } from "../../src/wiring/webhooks.ts";
import { startWorkerProcess } from "../../src/wiring/worker.ts";
import { testResolver } from "../webhooks/api-support.ts";
import { CHAOS_RECEIVER_TIMEOUT_MS, CHAOS_SCHEDULE } from "./settings.ts";

function delivery(caFile: string): WebhookDeliveryOptions {
  return {
    resolver: testResolver(),
    allowLoopback: true,
    trustedCa: readFileSync(caFile, "utf8"),
    schedule: CHAOS_SCHEDULE,
    receiverTimeoutMs: CHAOS_RECEIVER_TIMEOUT_MS,
  };
}

async function main(): Promise<void> {
  const [role, caFile] = process.argv.slice(2);
  if ((role !== "api" && role !== "worker") || !caFile) throw new Error("usage: service-process.ts api|worker <CA certificate file>");
  const config = loadConfig();
  const { databaseUrl, temporalAddress } = config;
  if (!databaseUrl || !temporalAddress) throw new Error("set DATABASE_URL and TEMPORAL_ADDRESS");
  const warn = { warn: (details: Record<string, unknown>, message: string) => console.warn(message, details) };

  let stop: () => Promise<void>;
  if (role === "api") {
    await ensureSearchAttributes(temporalAddress, config.temporalNamespace);
    const app = await startApp({ config, databaseUrl, webhookDelivery: delivery(caFile) });
    stop = () => app.close();
  } else {
    const worker = await startWorkerProcess(config, databaseUrl, warn, { webhookDelivery: delivery(caFile) });
    stop = () => worker.stop();
  }
  console.log("ready");
  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    try {
      await stop();
    } catch (error) {
      console.error("error during shutdown", error);
    }
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown());
  process.once("SIGINT", () => void shutdown());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
