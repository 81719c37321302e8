import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresCreditsStore } from "../adapters/postgres/credits/postgres-credits-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { CreditsService } from "../capabilities/credits/index.ts";

/** The credits capability on an open ORM (see src/adapters/postgres/orm.ts). */
export function createCredits(orm: MikroORM): CreditsService {
  return new CreditsService({ store: new PostgresCreditsStore(poolOf(orm)) });
}
