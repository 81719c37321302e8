import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresSuppressionsStore } from "../adapters/postgres/suppressions/postgres-suppressions-store.ts";
import { Suppressions } from "../capabilities/suppressions/index.ts";

/** The suppression list on an open ORM (see src/adapters/postgres/orm.ts). */
export function createSuppressions(orm: MikroORM, config: Pick<Config, "cursorSecret">): Suppressions {
  return new Suppressions({ store: new PostgresSuppressionsStore(orm), cursorSecret: config.cursorSecret });
}
