import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresStatsStore } from "../adapters/postgres/stats/postgres-stats-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { MailStatistics } from "../capabilities/stats/index.ts";

/** The sending statistics on an open ORM (the aggregates are kept by the message store). */
export function createMailStatistics(orm: MikroORM, options: { readonly clock?: () => Date } = {}): MailStatistics {
  return new MailStatistics({ store: new PostgresStatsStore(poolOf(orm)), ...(options.clock ? { clock: options.clock } : {}) });
}
