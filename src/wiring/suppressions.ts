import type { MikroORM } from "@mikro-orm/postgresql";
import { poolOf } from "../adapters/postgres/sql.ts";
import { PostgresSuppressionsStore } from "../adapters/postgres/suppressions/postgres-suppressions-store.ts";
import { SuppressionsService } from "../capabilities/suppressions/index.ts";

/** The suppression list on an open ORM (see src/adapters/postgres/orm.ts). */
export function createSuppressions(orm: MikroORM): SuppressionsService {
  return new SuppressionsService({ store: new PostgresSuppressionsStore(poolOf(orm)) });
}
