import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresClickLedger, PostgresContactDirectory, PostgresConversionStore } from "../adapters/postgres/conversions/index.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { Conversions } from "../capabilities/conversions/index.ts";
import type { Config } from "../config.ts";

/** Conversions, their click ledger and the contacts they read, on an open ORM (see src/adapters/postgres/orm.ts). */
export function createConversions(orm: MikroORM, config: Pick<Config, "cursorSecret">): Conversions {
  const db = poolOf(orm);
  return new Conversions({
    store: new PostgresConversionStore(db),
    contacts: new PostgresContactDirectory(db),
    clicks: new PostgresClickLedger(db),
    cursorSecret: config.cursorSecret,
  });
}
