/**
 * The service under test, as it is deployed: the API process
 * (src/api-main.ts, RUN_WORKER=false) and a worker process, each a child
 * process of its own, configured through the environment only. The rate
 * limit and the sending pace are raised so that they do not cap the
 * figures; everything else is the default configuration.
 *
 * The worker is bench/processes/worker.ts: src/worker-main.ts plus the
 * webhook test overrides that let it reach the benchmark's HTTPS receiver
 * on 127.0.0.1 (loopback is refused in production, and the receiver's
 * certificate is self-signed). Same composition root, same activities.
 */
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient, type Client as ConnectClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { CONFIG_VARIABLES } from "../../src/config.ts";
import { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import { DomainsService, SendersService } from "../../src/gen/mail/v1/domains_pb.js";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { findFreePort } from "../../src/runtime/ports.ts";
import { startTemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { makeTestCertificate } from "../../test/adapters/http/https-receiver.ts";
import { API_NODE_FLAGS, type Child, startChild, WORKER_NODE_FLAGS } from "./processes.ts";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
export const API_MAIN = path.join(ROOT, "src", "api-main.ts");
export const BENCH_WORKER = path.join(ROOT, "bench", "processes", "worker.ts");

export const OPERATOR_TOKEN = "bench-operator-token-0123456789abcdef";
/** The API key pepper of the service and of the bare baseline (which hashes keys the same way). */
export const API_KEY_PEPPER = "bench-api-key-pepper-0123456789abcdef";
/** Seals the webhook endpoint secrets: the runner creates the endpoint, the worker unseals its secret. */
export const DATA_ENCRYPTION_KEY = "bench-data-encryption-key-0123456789abcdef";

export interface ServiceSettings {
  readonly databaseUrl: string;
  readonly temporalAddress: string;
  readonly taskQueue: string;
  readonly verbose: boolean;
}

/**
 * The environment of a service process: the runner's, without any of the
 * service's own variables (a DATABASE_URL in the caller's shell must not
 * leak in), plus the benchmark's settings.
 */
export function serviceEnv(settings: ServiceSettings, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const own = new Set(CONFIG_VARIABLES);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !own.has(name)));
  return {
    ...env,
    MAIL_MODE: "development",
    DATABASE_URL: settings.databaseUrl,
    TEMPORAL_ADDRESS: settings.temporalAddress,
    TEMPORAL_TASK_QUEUE: settings.taskQueue,
    OPERATOR_TOKEN,
    API_KEY_PEPPER,
    DATA_ENCRYPTION_KEY,
    EMAIL_PROVIDER: "simulator",
    RATE_LIMIT_PER_MINUTE: "100000000",
    SENDING_RATE_PER_SECOND: "100000",
    SENDING_BURST: "100000",
    LOG_LEVEL: "warn",
    ...extra,
  };
}

export interface ApiProcess {
  readonly child: Child;
  readonly httpUrl: string;
  readonly grpcUrl: string;
  readonly operatorUrl: string;
}

export async function startApi(settings: ServiceSettings, name = "api"): Promise<ApiProcess> {
  const [http, grpc, operator] = [await findFreePort(), await findFreePort(), await findFreePort()];
  const httpUrl = `http://127.0.0.1:${http}`;
  const child = await startChild({
    name,
    script: API_MAIN,
    nodeFlags: API_NODE_FLAGS,
    env: serviceEnv(settings, {
      RUN_WORKER: "false",
      HOST: "127.0.0.1",
      HTTP_PORT: String(http),
      GRPC_PORT: String(grpc),
      OPERATOR_PORT: String(operator),
    }),
    // Ready: the listeners answer and PostgreSQL and Temporal are reachable.
    readyCheck: async () => (await fetch(`${httpUrl}/readyz`)).ok,
    verbose: settings.verbose,
  });
  return { child, httpUrl, grpcUrl: `http://127.0.0.1:${grpc}`, operatorUrl: `http://127.0.0.1:${operator}` };
}

/** Where the worker may post webhooks: a host name resolved to 127.0.0.1, and the receiver's certificate (a PEM file). */
export interface WebhookReceiverAccess {
  readonly host: string;
  readonly caFile: string;
}

export async function startWorker(settings: ServiceSettings, receiver: WebhookReceiverAccess, name = "worker"): Promise<Child> {
  return startChild({
    name,
    script: BENCH_WORKER,
    nodeFlags: WORKER_NODE_FLAGS,
    env: serviceEnv(settings, {
      BENCH_HOOK_HOST: receiver.host,
      BENCH_HOOK_CA_FILE: receiver.caFile,
      // Ports of their own: the defaults may be taken on a shared machine.
      WORKER_OPERATOR_PORT: String(await findFreePort()),
      TEMPORAL_METRICS_ADDRESS: `127.0.0.1:${await findFreePort()}`,
    }),
    readyLine: /^worker running/,
    verbose: settings.verbose,
  });
}

export interface DeployedService {
  readonly api: ApiProcess;
  readonly worker: Child;
  readonly temporalAddress: string;
  readonly taskQueue: string;
  /** Stops the processes and the Temporal dev server, and removes the certificate file. */
  stop(): Promise<void>;
}

/**
 * An API process and a worker process on `databaseUrl` (migrated), with a
 * Temporal dev server of their own; no webhook endpoint is reachable (the
 * worker's webhook settings only need a certificate file).
 */
export async function startDeployedService(databaseUrl: string, name: string, verbose: boolean): Promise<DeployedService> {
  const steps: Array<() => Promise<unknown>> = [];
  const stop = async (): Promise<void> => {
    for (const step of steps.splice(0)) await step().catch((error: unknown) => console.error(error));
  };
  try {
    const temporal = await startTemporalDevServer();
    steps.unshift(() => temporal.stop());
    const suffix = randomBytes(3).toString("hex");
    const service = { databaseUrl, temporalAddress: temporal.address, taskQueue: `bench-${name}-${suffix}`, verbose };
    const caFile = path.join(os.tmpdir(), `mail-bench-${name}-${suffix}.pem`);
    await writeFile(caFile, (await makeTestCertificate(["hooks.bench.test"])).cert);
    steps.unshift(() => rm(caFile, { force: true }));
    const api = await startApi(service);
    steps.unshift(() => api.child.stop());
    const worker = await startWorker(service, { host: "hooks.bench.test", caFile });
    steps.unshift(() => worker.stop());
    return { api, worker, temporalAddress: temporal.address, taskQueue: service.taskQueue, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export type Admin = ConnectClient<typeof AdminService>;

export function adminClient(operatorUrl: string): Admin {
  const operator: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
    return next(request);
  };
  return createClient(AdminService, createConnectTransport({ baseUrl: operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
}

export interface BenchCompany {
  readonly companyId: string;
  /** API key with the send and read scopes. */
  readonly secret: string;
}

/** A company ready to send (verified domain, default sender, credits), made by the operator (AdminService and the company services with the company header). */
export async function setupCompany(operatorUrl: string, credits: number): Promise<BenchCompany> {
  const admin = adminClient(operatorUrl);
  const { company } = await admin.createCompany({ name: "Bench Co" });
  const companyId = company?.id ?? "";
  // Keys are the company's own (ApiKeysService), reached by the operator with the company header.
  const forCompany: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
    request.header.set("x-mail-company-id", companyId);
    return next(request);
  };
  const keys = createClient(ApiKeysService, createConnectTransport({ baseUrl: operatorUrl, httpVersion: "1.1", interceptors: [forCompany] }));
  const { secret } = await keys.createApiKey({ name: "bench", scopes: ["mail.transactional.send", "mail.events.read"] });
  const transport = createConnectTransport({ baseUrl: operatorUrl, httpVersion: "1.1", interceptors: [forCompany] });
  const { domain } = await createClient(DomainsService, transport).createDomain({ domain: "bench.example" });
  await admin.overrideDomainVerification({ companyId, domainId: domain?.id ?? "" });
  await createClient(SendersService, transport).createSender({ email: "bench@bench.example", makeDefault: true });
  await admin.adjustCredits({ companyId, amount: BigInt(credits), note: "bench" });
  return { companyId, secret };
}
