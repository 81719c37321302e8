import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresCreditsStore } from "../adapters/postgres/credits/postgres-credits-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { Credits } from "../capabilities/credits/index.ts";

/** The credits capability on an open ORM (see src/adapters/postgres/orm.ts). */
export function createCredits(orm: MikroORM): Credits {
  return new Credits({ store: new PostgresCreditsStore(poolOf(orm)) });
}
