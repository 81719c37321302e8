import type { FastifyServerOptions } from "fastify";
import type { Config } from "./config.ts";
import { type Accounts, createAccounts } from "./domain/accounts/index.ts";
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
  const rateLimiter = createRateLimiter(orm);
  const servers = await buildApiServers({
    config,
    authenticator: accounts.authenticator,
    rateLimiter,
    adminService: adminServiceImpl({ accounts: accounts.service }),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  const { httpUrl, grpcUrl } = await servers.listen();

  let closed: Promise<void> | undefined;
  return {
    config,
    orm,
    accounts,
    servers,
    httpUrl,
    grpcUrl,
    close() {
      closed ??= (async () => {
        await servers.close();
        await accounts.usage.close();
        await rateLimiter.close();
        await orm.close();
      })();
      return closed;
    },
  };
}
