import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresAccountsStore } from "../adapters/postgres/accounts/postgres-accounts-store.ts";
import { PostgresApiKeyCredentials } from "../adapters/postgres/accounts/postgres-api-key-credentials.ts";
import { PostgresKeyUsageStore } from "../adapters/postgres/accounts/postgres-key-usage-store.ts";
import { type CredentialChangeFeed, listenForCredentialChanges } from "../adapters/postgres/accounts/credential-changes.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { ApiKeys, BearerKeyAuthenticator, Companies, KeyUsageBatcher, type ApiKeyAuthenticator, type CredentialChangeHooks } from "../capabilities/accounts/index.ts";
import { CachedApiKeyCredentials } from "../capabilities/accounts/cached-credentials.ts";

export type AccountsConfig = Pick<Config, "apiKeyPepper" | "apiKeyPrefix" | "keyRotationGraceHours" | "keyUsageFlushMs" | "cursorSecret">;

export interface AccountsOptions {
  /**
   * The time that key expiry, rotation grace and "last used" are read
   * against. Default: the system clock.
   */
  readonly clock?: () => Date;
  /** Failures of background "last used" writes. Default: console.error. */
  readonly onUsageFlushError?: (error: unknown) => void;
  /**
   * How long a key lookup is reused (CachedApiKeyCredentials); 0 reads the
   * database on every request. Default 10 s. Changes to keys and companies
   * empty the cache at once, in every process (PostgreSQL NOTIFY).
   */
  readonly credentialsTtlMs?: number;
  /** Failures of the change feed's connection (it reconnects by itself). Default: console.warn. */
  readonly onChangeFeedError?: (error: unknown) => void;
}

export interface Accounts {
  readonly authenticator: ApiKeyAuthenticator;
  /** Companies and their entitlements (AdminService). */
  readonly companies: Companies;
  /** A company's API keys (ApiKeysService). */
  readonly keys: ApiKeys;
  /** "Last used" batches; `close()` closes them. */
  readonly usage: KeyUsageBatcher;
  /** Writes the last "last used" batch and stops hearing key changes; before `orm.close()`. */
  close(): Promise<void>;
}

/** Longest wait for the change feed to hear a key change before it is answered anyway (a no-op change notifies nothing). */
const CHANGE_HEARD_BOUND_MS = 1000;
/** After this process heard it, the moment the other processes' feeds get to run (they were signalled together). */
const CHANGE_SETTLE_MS = 50;

/** The accounts capability on an open ORM (see src/adapters/postgres/orm.ts). */
export function createAccounts(orm: MikroORM, config: AccountsConfig, options: AccountsOptions = {}): Accounts {
  const clock = options.clock ?? (() => new Date());
  const pool = poolOf(orm);
  const usage = new KeyUsageBatcher(new PostgresKeyUsageStore(pool), {
    flushMs: config.keyUsageFlushMs,
    ...(options.onUsageFlushError ? { onError: options.onUsageFlushError } : {}),
  });
  const credentials = new CachedApiKeyCredentials(new PostgresApiKeyCredentials(pool), {
    ...(options.credentialsTtlMs !== undefined ? { ttlMs: options.credentialsTtlMs } : {}),
  });
  // Changes made here are answered once the feed has heard one (bounded): by then PostgreSQL has
  // signalled every listening process, so a revoked key fails on the caller's very next call anywhere.
  let listeningNow = false;
  const waiters = new Set<() => void>();
  const releaseWaiters = (): void => {
    for (const release of waiters) release();
    waiters.clear();
  };
  const changeHeard = (): Promise<void> => {
    if (!listeningNow) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(release);
        resolve();
      }, CHANGE_HEARD_BOUND_MS);
      timer.unref();
      const release = (): void => {
        clearTimeout(timer);
        // PostgreSQL signalled every listener at the same moment; a short settle lets the others' feeds run too.
        setTimeout(resolve, CHANGE_SETTLE_MS).unref();
      };
      waiters.add(release);
    });
  };
  const feed: CredentialChangeFeed | undefined =
    options.credentialsTtlMs === 0
      ? undefined
      : listenForCredentialChanges(pool, {
          changed: () => {
            credentials.invalidateAll();
            releaseWaiters();
          },
          listening: (on) => {
            listeningNow = on;
            credentials.setEnabled(on);
            if (!on) releaseWaiters();
          },
          onError: options.onChangeFeedError ?? ((error) => console.warn(`API key change feed: ${String(error)}; lookups are not cached until it is back`)),
        });
  const authenticator = new BearerKeyAuthenticator({
    credentials,
    apiKeyPrefix: config.apiKeyPrefix,
    apiKeyPepper: config.apiKeyPepper,
    usage,
    clock,
  });
  // This process's own changes apply before they are answered; the others' arrive by the feed.
  const credentialChanges: CredentialChangeHooks = { onCredentialsChanged: () => credentials.invalidateAll(), changeHeard };
  const store = new PostgresAccountsStore(orm);
  return {
    authenticator,
    companies: new Companies({ store, credentialChanges }),
    keys: new ApiKeys({
      store,
      apiKeyPrefix: config.apiKeyPrefix,
      apiKeyPepper: config.apiKeyPepper,
      keyRotationGraceHours: config.keyRotationGraceHours,
      cursorSecret: config.cursorSecret,
      clock,
      credentialChanges,
    }),
    usage,
    async close() {
      await feed?.close();
      await usage.close();
    },
  };
}
