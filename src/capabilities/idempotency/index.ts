import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../../config.ts";
import { poolOf } from "../../adapters/postgres/sql.ts";
import { IdempotencyGuard, type IdempotencyGuardOptions } from "./idempotency-guard.ts";
import { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from "../../adapters/postgres/idempotency/postgres-idempotency-store.ts";

export type { ClaimResult, ExistingRecord, IdempotencyScope, IdempotencyStore, StoredAnswer } from "./types.ts";
export { IdempotencyGuard, type ExecuteOptions, type Execution, type FreshAnswer, type IdempotencyGuardOptions } from "./idempotency-guard.ts";
export { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from "../../adapters/postgres/idempotency/postgres-idempotency-store.ts";
export { canonicalJson, requestFingerprint } from "./fingerprint.ts";
export { IDEMPOTENCY_KEY_MAX_LENGTH, parseIdempotencyKey } from "./idempotency-key.ts";
export { IDEMPOTENT_REPLAYED_HEADER, storableHeaders } from "./answer-headers.ts";

export type IdempotencyOptions = IdempotencyGuardOptions & Omit<PostgresIdempotencyStoreOptions, "windowHours">;

/**
 * The idempotency guard shared by every API process using the database of
 * `orm`. `close()` it on shutdown, before `orm.close()`.
 */
export function createIdempotency(
  orm: MikroORM,
  config: Pick<Config, "idempotencyWindowHours">,
  options: IdempotencyOptions = {},
): IdempotencyGuard {
  const store = new PostgresIdempotencyStore(poolOf(orm), { ...options, windowHours: config.idempotencyWindowHours });
  return new IdempotencyGuard(store, options);
}
