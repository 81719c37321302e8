/**
 * The production topology without Docker, for tests: API processes
 * (`node src/api-main.ts`, RUN_WORKER=false) and worker processes
 * (`node src/worker-main.ts`) on one PostgreSQL database and one Temporal
 * namespace, each on ports of its own, and a company ready to send.
 */
import { randomBytes } from "node:crypto";
import { findFreePort } from "../../src/runtime/ports.ts";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { type AdminClient, adminClient, OPERATOR_TOKEN, operatorClient } from "../support/api-harness.ts";
import { run, type Running } from "./processes.ts";

export { OPERATOR_TOKEN };

/** How long a process may take to start: Node strips the types of every module and a worker bundles the workflows (webpack), slow on a busy 2-core machine. */
const STARTUP_MS = 180_000;

export interface Shared {
  readonly databaseUrl: string;
  readonly temporalAddress: string;
  readonly taskQueue: string;
  /** More settings for every process (e.g. the Temporal TLS files). */
  readonly env?: Record<string, string>;
}

/**
 * What every process of a test topology gets: development mode (the
 * verification override lets the test company send without DNS), the
 * operator token of the test support, warnings only.
 */
export function commonEnv(shared: Shared, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: shared.databaseUrl,
    TEMPORAL_ADDRESS: shared.temporalAddress,
    TEMPORAL_TASK_QUEUE: shared.taskQueue,
    OPERATOR_TOKEN,
    LOG_LEVEL: "warn",
    RELAY_INTERVAL_MS: "300",
    SENDING_RATE_PER_SECOND: "1000",
    SENDING_BURST: "1000",
    ...shared.env,
    ...extra,
  };
}

export interface ApiProcess {
  readonly process: Running;
  readonly httpUrl: string;
  readonly operatorUrl: string;
  readonly admin: AdminClient;
}

export interface WorkerProcess {
  readonly process: Running;
  /** The worker's own listener: /livez, /readyz, /metrics. */
  readonly url: string;
  /** The Temporal SDK's Prometheus exporter. */
  readonly sdkMetricsUrl: string;
}

/** Starts `node src/api-main.ts` (no worker) and waits until it listens. */
export async function startApi(shared: Shared, extra: Record<string, string> = {}): Promise<ApiProcess> {
  const [httpPort, grpcPort, operatorPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
  const api = run(
    "src/api-main.ts",
    commonEnv(shared, {
      HTTP_PORT: String(httpPort),
      GRPC_PORT: String(grpcPort),
      OPERATOR_PORT: String(operatorPort),
      RUN_WORKER: "false",
      ...extra,
    }),
  );
  await api.waitFor(/API listening: /, STARTUP_MS);
  const operatorUrl = `http://127.0.0.1:${operatorPort}`;
  return { process: api, httpUrl: `http://127.0.0.1:${httpPort}`, operatorUrl, admin: adminClient(operatorUrl) };
}

/** Starts `node src/worker-main.ts` and waits until it polls. */
export async function startWorker(shared: Shared, extra: Record<string, string> = {}): Promise<WorkerProcess> {
  const [listenerPort, metricsPort] = [await findFreePort(), await findFreePort()];
  const worker = run(
    "src/worker-main.ts",
    commonEnv(shared, {
      WORKER_OPERATOR_PORT: String(listenerPort),
      TEMPORAL_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      ...extra,
    }),
  );
  await worker.waitFor(/worker running on task queue /, STARTUP_MS);
  return { process: worker, url: `http://127.0.0.1:${listenerPort}`, sdkMetricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}

export interface Sender {
  readonly companyId: string;
  readonly secret: string;
}

/** A company that can send: a key, a domain verified by override (development mode), a default sender, credits. */
export async function readySender(api: Pick<ApiProcess, "admin" | "operatorUrl">, credits: number): Promise<Sender> {
  const admin = api.admin;
  const suffix = randomBytes(4).toString("hex");
  const { company } = await admin.createCompany({ name: `Shop ${suffix}`, entitlements: { api: true, smtp: false } });
  const companyId = company?.id ?? "";
  const keys = operatorClient(api.operatorUrl, ApiKeysService, companyId);
  const { secret } = await keys.createApiKey({ name: "backend", scopes: ["mail.transactional.send", "mail.events.read"] });
  const { domain } = await admin.createSendingDomain({ companyId, domain: `shop-${suffix}.example` });
  await admin.verifySendingDomain({ companyId, domainId: domain?.id ?? "", override: true });
  await admin.createSender({ companyId, email: `receipts@shop-${suffix}.example`, name: "Shop", makeDefault: true });
  await admin.adjustCredits({ companyId, amount: BigInt(credits), note: "test credits" });
  return { companyId, secret };
}

/** POST /mail/v1/send on `baseUrl`. */
export function send(baseUrl: string, secret: string, body: unknown, idempotencyKey?: string): Promise<Response> {
  return fetch(new URL("/mail/v1/send", baseUrl), {
    method: "POST",
    headers: {
      authorization: `Bearer ${secret}`,
      "content-type": "application/json",
      ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** GET <url>/metrics as text. */
export async function scrape(url: string): Promise<string> {
  const response = await fetch(url.endsWith("/metrics") ? url : new URL("/metrics", url));
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return response.text();
}
