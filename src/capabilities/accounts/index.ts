import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../../config.ts";
import { poolOf } from "../../adapters/postgres/sql.ts";
import { AccountsService } from "./accounts-service.ts";
import { PostgresApiKeyAuthenticator } from "./authenticator.ts";
import { KeyUsageBatcher } from "./key-usage-batcher.ts";
import type { ApiKeyAuthenticator } from "./types.ts";

export type { ApiKeyAuthenticator, AuthenticatedKey, CompanyEntitlements } from "./types.ts";
export type { ApiKeyStatus, ApiKeyView, CompanyView } from "./views.ts";
export type { CreatedApiKey, RotatedApiKey } from "./accounts-service.ts";
export { AccountsService } from "./accounts-service.ts";
export { KeyUsageBatcher, type KeyUsageRecorder } from "./key-usage-batcher.ts";
export { API_KEY_SCOPES, isApiKeyScope, type ApiKeyScope } from "./scopes.ts";

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

/** Wires the accounts domain on an open ORM (see src/persistence/orm.ts). */
export function createAccounts(orm: MikroORM, config: AccountsConfig, options: AccountsOptions = {}): Accounts {
  const clock = options.clock ?? (() => new Date());
  const pool = poolOf(orm);
  const usage = new KeyUsageBatcher(pool, {
    flushMs: config.keyUsageFlushMs,
    ...(options.onUsageFlushError ? { onError: options.onUsageFlushError } : {}),
  });
  const authenticator = new PostgresApiKeyAuthenticator({
    pool,
    apiKeyPrefix: config.apiKeyPrefix,
    apiKeyPepper: config.apiKeyPepper,
    usage,
    clock,
  });
  const service = new AccountsService({
    orm,
    apiKeyPrefix: config.apiKeyPrefix,
    apiKeyPepper: config.apiKeyPepper,
    keyRotationGraceHours: config.keyRotationGraceHours,
    clock,
  });
  return { authenticator, service, usage };
}
