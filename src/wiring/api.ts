import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config.ts";
import { openServices, type ServiceLog, type Services } from "./services.ts";
import { type RunningWorker, startMessageWorker } from "../adapters/temporal/worker.ts";
import { adminServiceImpl } from "../transport/connect/admin/index.ts";
import { type ApiServers, buildApiServers } from "../transport/server.ts";

/**
 * The composition root of one API process: the domain services, the
 * servers, the outbox relay and (unless RUN_WORKER=false) the Temporal
 * worker. `npm start` (src/main.ts) and the tests both build the service
 * through here, so what is tested is what runs.
 */
export interface App extends Omit<Services, "close"> {
  readonly config: Config;
  readonly servers: ApiServers;
  /** Bound URLs once listening. */
  readonly httpUrl: string;
  readonly grpcUrl: string;
  close(): Promise<void>;
}

export interface StartAppOptions {
  readonly config: Config;
  /** Overrides config.databaseUrl (which may be unset when embedded PostgreSQL is used). */
  readonly databaseUrl?: string;
  readonly logger?: FastifyServerOptions["logger"];
}

export async function startApp(options: StartAppOptions): Promise<App> {
  const { config } = options;
  const databaseUrl = options.databaseUrl ?? config.databaseUrl;
  if (!databaseUrl) throw new Error("no database URL: set DATABASE_URL");

  // The servers' logger, once they exist (the services are built before them).
  const built: { servers?: ApiServers } = {};
  const log: ServiceLog = {
    warn: (details, message) => (built.servers ? built.servers.http.log.warn(details, message) : console.warn(message, details)),
  };
  const services = await openServices(databaseUrl, config, log);
  const { accounts, sendingSetup, credits, suppressions, messaging } = services;
  const servers = await buildApiServers({
    config,
    authenticator: accounts.authenticator,
    rateLimiter: services.rateLimiter,
    idempotency: services.idempotency,
    adminService: adminServiceImpl({ accounts: accounts.service, sendingSetup, credits, suppressions, messaging }),
    mail: { acceptSend: messaging.acceptSend, messages: messaging.reader },
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  built.servers = servers;
  const { httpUrl, grpcUrl } = await servers.listen();
  messaging.dispatcher.startRelay();
  const worker: RunningWorker | undefined =
    config.runWorker && config.temporalAddress ? await startWorkerFor(config, services) : undefined;

  let closed: Promise<void> | undefined;
  return {
    ...services,
    config,
    servers,
    httpUrl,
    grpcUrl,
    close() {
      closed ??= (async () => {
        await servers.close();
        await worker?.stop();
        await services.close();
      })();
      return closed;
    },
  };
}

/** The Temporal worker of message workflows, on this process's services. */
export function startWorkerFor(config: Config, services: Services): Promise<RunningWorker> {
  if (!config.temporalAddress) throw new Error("no Temporal address: set TEMPORAL_ADDRESS");
  return startMessageWorker({
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    lifecycle: services.messaging.lifecycle,
    pace: services.messaging.pace,
  });
}
