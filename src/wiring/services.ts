import type { Config } from "../config.ts";
import { type Accounts, createAccounts } from "../capabilities/accounts/index.ts";
import { createCredits, type CreditsService } from "../capabilities/credits/index.ts";
import { createIdempotency, type IdempotencyGuard } from "../capabilities/idempotency/index.ts";
import { createMessaging, type Messaging } from "./messaging.ts";
import { createRateLimiter, type PostgresRateLimiter } from "../capabilities/rate-limit/index.ts";
import { createSendingSetup, type SendingSetup } from "../capabilities/sending-setup/index.ts";
import { createSuppressions, type SuppressionsService } from "../capabilities/suppressions/index.ts";
import { type MikroORM, migrate, openOrm } from "../adapters/postgres/orm.ts";
import { poolOf } from "../adapters/postgres/sql.ts";

/**
 * The domain services of one process on an open, migrated database. Both
 * kinds of process build them here: the API (src/app.ts) and a worker-only
 * process (src/worker-main.ts).
 */
export interface Services {
  readonly orm: MikroORM;
  readonly accounts: Accounts;
  /** Sending domains, senders (checkSender, resolveSender) and templates (getTemplate). */
  readonly sendingSetup: SendingSetup;
  readonly credits: CreditsService;
  readonly suppressions: SuppressionsService;
  readonly rateLimiter: PostgresRateLimiter;
  readonly idempotency: IdempotencyGuard;
  readonly messaging: Messaging;
  close(): Promise<void>;
}

export interface ServiceLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export async function openServices(databaseUrl: string, config: Config, log: ServiceLog): Promise<Services> {
  const orm = await openOrm(databaseUrl);
  await migrate(orm);
  const accounts = createAccounts(orm, config);
  const sendingSetup = createSendingSetup(orm, config);
  const credits = createCredits(orm);
  const suppressions = createSuppressions(orm);
  const rateLimiter = createRateLimiter(orm);
  const idempotency = createIdempotency(orm, config);
  const messaging = createMessaging({
    db: poolOf(orm),
    config,
    credits,
    suppressions,
    senders: sendingSetup.senders,
    templates: sendingSetup.templates,
    log,
  });
  return {
    orm,
    accounts,
    sendingSetup,
    credits,
    suppressions,
    rateLimiter,
    idempotency,
    messaging,
    async close() {
      await messaging.close();
      await accounts.usage.close();
      await rateLimiter.close();
      await idempotency.close();
      await orm.close();
    },
  };
}
