import type { MikroORM } from "@mikro-orm/postgresql";
import { poolOf } from "../../adapters/postgres/sql.ts";
import { SuppressionsService } from "./suppressions-service.ts";

export { SUPPRESSION_REASONS, SuppressionsService, type SuppressionEntry } from "./suppressions-service.ts";
export type { SuppressionReason } from "../../adapters/postgres/repositories/suppression-repository.ts";
export { suppressionKey } from "./normalize.ts";

/** Wires the suppression list on an open ORM (see src/persistence/orm.ts). */
export function createSuppressions(orm: MikroORM): SuppressionsService {
  return new SuppressionsService({ orm, pool: poolOf(orm) });
}
