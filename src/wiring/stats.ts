import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresStatsFold } from "../adapters/postgres/stats/stats-fold.ts";
import { PostgresStatsStore } from "../adapters/postgres/stats/postgres-stats-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { OutboxRelay } from "../adapters/temporal/outbox-relay.ts";
import { MailStatistics } from "../capabilities/stats/index.ts";

/** How often the API process folds the outcomes the send path recorded into the aggregates. */
const FOLD_INTERVAL_MS = 1_000;

/** The sending statistics on an open ORM (the message store records the outcomes; the fold below counts them). */
export function createMailStatistics(orm: MikroORM, options: { readonly clock?: () => Date } = {}): MailStatistics {
  return new MailStatistics({ store: new PostgresStatsStore(poolOf(orm)), ...(options.clock ? { clock: options.clock } : {}) });
}

/**
 * The periodic fold of the recorded outcomes into the hourly aggregates
 * (adapters/postgres/stats/stats-fold.ts): start() beside the servers,
 * close() before the pool. Every API process runs one; folds take turns.
 */
export function createStatsFoldLoop(orm: MikroORM, log: { warn(details: Record<string, unknown>, message: string): void }): OutboxRelay {
  const fold = new PostgresStatsFold(poolOf(orm));
  return new OutboxRelay({
    pass: () => fold.fold(),
    intervalMs: FOLD_INTERVAL_MS,
    log,
    failure: "statistics fold failed; the next pass counts the outcomes it left",
  });
}
