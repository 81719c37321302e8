import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../../src/runtime/embedded-postgres.ts";
import { findFreePort } from "../../src/runtime/ports.ts";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { makeTestCertificate } from "../adapters/http/https-receiver.ts";
import { adminClient, OPERATOR_TOKEN, operatorClient } from "../support/api-harness.ts";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { HOOK_HOST } from "../webhooks/api-support.ts";

/**
 * What every chaos run stands on (docs/chaos.md): a folder of its own, the
 * ports picked at start and kept across restarts, an embedded PostgreSQL
 * and a Temporal dev server that keep their state in that folder (so they
 * can be crashed and started again), the test CA the service processes
 * trust, the service's environment, and the run's timeline.
 */
export interface ChaosStack {
  readonly root: string;
  readonly ports: { readonly pg: number; readonly temporal: number; readonly temporalUi: number; readonly http: number; readonly grpc: number; readonly operator: number };
  /** CA certificate (PEM file) of the webhook receivers, for ServiceChild. */
  readonly caFile: string;
  readonly certificate: Awaited<ReturnType<typeof makeTestCertificate>>;
  postgres: EmbeddedPostgres | undefined;
  temporal: TemporalDevServer | undefined;
  startPostgres(): Promise<EmbeddedPostgres>;
  startTemporal(): Promise<TemporalDevServer>;
  /** The service processes' environment (both roles), before each run's own settings. */
  serviceEnv(): NodeJS.ProcessEnv;
  /** Adds a line to the timeline (printed as it happens and at the end). */
  note(what: string): void;
  readonly timeline: readonly string[];
  /** Stops the servers; removes the folder unless `keep`. */
  close(keep: boolean): Promise<void>;
}

export async function startChaosStack(name: string): Promise<ChaosStack> {
  const started = Date.now();
  const root = await mkdtemp(path.join(tmpdir(), `mail-${name}-`));
  // As root, PostgreSQL runs as the postgres user, who must reach its data directory in here.
  await chmod(root, 0o755);
  const ports = { pg: 0, temporal: 0, temporalUi: 0, http: 0, grpc: 0, operator: 0 };
  for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await findFreePort();
  const certificate = await makeTestCertificate([HOOK_HOST]);
  const caFile = path.join(root, "receiver-ca.pem");
  await writeFile(caFile, certificate.cert);
  const timeline: string[] = [];

  const stack: ChaosStack = {
    root,
    ports,
    caFile,
    certificate,
    postgres: undefined,
    temporal: undefined,
    startPostgres: () => startEmbeddedPostgres({ dataDir: path.join(root, "postgres"), port: ports.pg }),
    startTemporal: () => startTemporalDevServer({ dataDir: path.join(root, "temporal"), port: ports.temporal, uiPort: ports.temporalUi }),
    serviceEnv() {
      if (!stack.postgres || !stack.temporal) throw new Error("start PostgreSQL and Temporal first");
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        MAIL_MODE: "development",
        DATABASE_URL: stack.postgres.url,
        TEMPORAL_ADDRESS: stack.temporal.address,
        TEMPORAL_TASK_QUEUE: `mail-${name}`,
        HOST: "127.0.0.1",
        HTTP_PORT: String(ports.http),
        GRPC_PORT: String(ports.grpc),
        OPERATOR_PORT: String(ports.operator),
        OPERATOR_TOKEN,
        API_KEY_PEPPER: "chaos-pepper",
        DATA_ENCRYPTION_KEY: "chaos-data-encryption-key",
        CURSOR_SECRET: "chaos-cursor-secret",
        RUN_WORKER: "false",
        RELAY_INTERVAL_MS: "300",
        RATE_LIMIT_PER_MINUTE: "1000000",
        SENDING_RATE_PER_SECOND: "1000",
        SENDING_BURST: "1000",
        // A key held by a request the killed API never answered is free again after this long.
        IDEMPOTENCY_LEASE_SECONDS: "8",
        LOG_LEVEL: "warn",
      };
      delete env.NODE_ENV;
      return env;
    },
    note(what) {
      const line = `${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${what}`;
      timeline.push(line);
      console.log(`[${name}] ${line}`);
    },
    timeline,
    async close(keep) {
      await stack.temporal?.stop();
      await stack.postgres?.stop();
      if (!keep) await rm(root, { recursive: true, force: true });
      else console.log(`[${name}] logs and data kept in ${root}`);
    },
  };
  return stack;
}

/** One statement on a connection of its own; undefined while PostgreSQL is away. */
export async function queryOnce<R extends pg.QueryResultRow>(postgres: EmbeddedPostgres | undefined, text: string, values: unknown[] = []): Promise<R[] | undefined> {
  if (!postgres) return undefined;
  const client = new pg.Client({ connectionString: postgres.url, connectionTimeoutMillis: 2_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.query<R>(text, values)).rows;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The company every chaos run sends for, made through the operator
 * listener: an API key that may send and read events, a verified domain
 * with its default sender (receipts@chaos.example), and `credits`.
 */
export async function createSendingCompany(operatorPort: number, credits: number): Promise<{ companyId: string; secret: string }> {
  const base = `http://127.0.0.1:${operatorPort}`;
  const admin = adminClient(base);
  const { company } = await admin.createCompany({ name: "Chaos Co", entitlements: { api: true, smtp: false } });
  const companyId = company?.id ?? "";
  const { secret } = await operatorClient(base, ApiKeysService, companyId).createApiKey({ name: "chaos", scopes: ["mail.transactional.send", "mail.events.read"] });
  const { domain } = await admin.createSendingDomain({ companyId, domain: "chaos.example" });
  await admin.verifySendingDomain({ companyId, domainId: domain?.id ?? "", override: true });
  await admin.createSender({ companyId, email: "receipts@chaos.example", name: "Chaos", makeDefault: true });
  await admin.adjustCredits({ companyId, amount: BigInt(credits), note: "chaos credits" });
  return { companyId, secret };
}
