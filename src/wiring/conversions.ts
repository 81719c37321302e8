import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresClickLedger, PostgresContactDirectory, PostgresConversionStore } from "../adapters/postgres/conversions/index.ts";
import { Conversions } from "../capabilities/conversions/index.ts";
import type { Config } from "../config.ts";

/** Conversions, their click ledger and the contacts they read, on an open ORM (see src/adapters/postgres/orm.ts). */
export function createConversions(orm: MikroORM, config: Pick<Config, "cursorSecret">): Conversions {
  return new Conversions({
    store: new PostgresConversionStore(orm),
    contacts: new PostgresContactDirectory(orm),
    clicks: new PostgresClickLedger(orm),
    cursorSecret: config.cursorSecret,
  });
}
