import type { FastifyServerOptions } from "fastify";
import type { Config } from "./config.ts";
import { type Accounts, createAccounts } from "./domain/accounts/index.ts";
import { createCredits, type CreditsService } from "./domain/credits/index.ts";
import { createSendingSetup, type SendingSetup } from "./domain/sending/setup/index.ts";
import { createSuppressions, type SuppressionsService } from "./domain/suppressions/index.ts";
import { createMessaging, type Messaging } from "./domain/messages/index.ts";
import { poolOf } from "./persistence/sql.ts";
import { type RunningWorker, startMessageWorker } from "./temporal/worker.ts";
import { createIdempotency } from "./domain/idempotency/index.ts";
import { createRateLimiter } from "./domain/rate-limit/index.ts";
import { type MikroORM, migrate, openOrm } from "./persistence/orm.ts";
import { adminServiceImpl } from "./transport/connect/admin/index.ts";
import { type ApiServers, buildApiServers } from "./transport/server.ts";

/**
 * The composition root of one API process: database, domain services and
 * the servers. `npm start` (src/main.ts) and the tests both build the
 * service through here, so what is tested is what runs.
 */
export interface App {
  readonly config: Config;
  readonly orm: MikroORM;
  readonly accounts: Accounts;
  /** Sending domains, senders (resolveSender) and templates (getTemplate). */
  readonly sendingSetup: SendingSetup;
  readonly credits: CreditsService;
  readonly suppressions: SuppressionsService;
  readonly messaging: Messaging;
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

  const orm = await openOrm(databaseUrl);
  await migrate(orm);
  const accounts = createAccounts(orm, config);
  const sendingSetup = createSendingSetup(orm, config);
  const credits = createCredits(orm);
  const suppressions = createSuppressions(orm);
  const rateLimiter = createRateLimiter(orm);
  const idempotency = createIdempotency(orm, config);
  // The servers' logger, once they exist (messaging is built before them).
  let serversRef: ApiServers | undefined;
  const log = {
    warn: (details: Record<string, unknown>, message: string) =>
      serversRef ? serversRef.http.log.warn(details, message) : console.warn(message, details),
  };
  const messaging = createMessaging({
    db: poolOf(orm),
    config,
    credits,
    suppressions,
    senders: sendingSetup.senders,
    templates: sendingSetup.templates,
    log,
  });
  const servers = await buildApiServers({
    config,
    authenticator: accounts.authenticator,
    rateLimiter,
    idempotency,
    adminService: adminServiceImpl({ accounts: accounts.service, sendingSetup, credits, suppressions, messaging }),
    mail: { acceptSend: messaging.acceptSend, messages: messaging.reader },
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  serversRef = servers;
  const { httpUrl, grpcUrl } = await servers.listen();
  messaging.dispatcher.startRelay();
  let worker: RunningWorker | undefined;
  if (config.runWorker && config.temporalAddress) {
    worker = await startMessageWorker({
      address: config.temporalAddress,
      namespace: config.temporalNamespace,
      taskQueue: config.temporalTaskQueue,
      lifecycle: messaging.lifecycle,
      pace: messaging.pace,
    });
  }

  let closed: Promise<void> | undefined;
  return {
    config,
    orm,
    accounts,
    sendingSetup,
    credits,
    suppressions,
    messaging,
    servers,
    httpUrl,
    grpcUrl,
    close() {
      closed ??= (async () => {
        await servers.close();
        await worker?.stop();
        await messaging.close();
        await accounts.usage.close();
        await rateLimiter.close();
        await idempotency.close();
        await orm.close();
      })();
      return closed;
    },
  };
}
