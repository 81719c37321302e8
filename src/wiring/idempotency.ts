import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from "../adapters/postgres/idempotency/postgres-idempotency-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { IdempotencyGuard, type IdempotencyGuardOptions } from "../capabilities/idempotency/index.ts";

export type IdempotencyOptions = IdempotencyGuardOptions & Omit<PostgresIdempotencyStoreOptions, "windowHours">;

/**
 * The idempotency guard shared by every API process using the database of
 * `orm`. `close()` it on shutdown, before `orm.close()`. The lease of a
 * claim is config.idempotencyLeaseSeconds (options.leaseSeconds wins).
 */
export function createIdempotency(
  orm: MikroORM,
  config: Pick<Config, "idempotencyWindowHours"> & Partial<Pick<Config, "idempotencyLeaseSeconds">>,
  options: IdempotencyOptions = {},
): IdempotencyGuard {
  const store = new PostgresIdempotencyStore(poolOf(orm), { ...options, windowHours: config.idempotencyWindowHours });
  const lease = config.idempotencyLeaseSeconds === undefined ? {} : { leaseSeconds: config.idempotencyLeaseSeconds };
  return new IdempotencyGuard(store, { ...lease, ...options });
}
