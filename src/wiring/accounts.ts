import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresAccountsStore } from "../adapters/postgres/accounts/postgres-accounts-store.ts";
import { PostgresApiKeyCredentials } from "../adapters/postgres/accounts/postgres-api-key-credentials.ts";
import { PostgresKeyUsageStore } from "../adapters/postgres/accounts/postgres-key-usage-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { AccountsService, BearerKeyAuthenticator, KeyUsageBatcher, type ApiKeyAuthenticator } from "../capabilities/accounts/index.ts";

export type AccountsConfig = Pick<Config, "apiKeyPepper" | "apiKeyPrefix" | "keyRotationGraceHours" | "keyUsageFlushMs">;

export interface AccountsOptions {
  /** Current time; tests pass a fake one. Default: the system clock. */
  readonly clock?: () => Date;
  /** Failures of background "last used" writes. Default: console.error. */
  readonly onUsageFlushError?: (error: unknown) => void;
}

export interface Accounts {
  readonly authenticator: ApiKeyAuthenticator;
  readonly service: AccountsService;
  /** "Last used" batches; `close()` it on shutdown, before `orm.close()`. */
  readonly usage: KeyUsageBatcher;
}

/** The accounts capability on an open ORM (see src/adapters/postgres/orm.ts). */
export function createAccounts(orm: MikroORM, config: AccountsConfig, options: AccountsOptions = {}): Accounts {
  const clock = options.clock ?? (() => new Date());
  const pool = poolOf(orm);
  const usage = new KeyUsageBatcher(new PostgresKeyUsageStore(pool), {
    flushMs: config.keyUsageFlushMs,
    ...(options.onUsageFlushError ? { onError: options.onUsageFlushError } : {}),
  });
  const authenticator = new BearerKeyAuthenticator({
    credentials: new PostgresApiKeyCredentials(pool),
    apiKeyPrefix: config.apiKeyPrefix,
    apiKeyPepper: config.apiKeyPepper,
    usage,
    clock,
  });
  const service = new AccountsService({
    store: new PostgresAccountsStore(orm),
    apiKeyPrefix: config.apiKeyPrefix,
    apiKeyPepper: config.apiKeyPepper,
    keyRotationGraceHours: config.keyRotationGraceHours,
    clock,
  });
  return { authenticator, service, usage };
}
