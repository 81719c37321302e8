import type { Pool } from "pg";
import type { MikroORM } from "@mikro-orm/postgresql";

export type { Pool, PoolClient } from "pg";

/**
 * The `pg` pool behind the ORM, for the hot paths written as single SQL
 * statements (authentication, rate limiting, "last used" batches). They
 * bypass the unit of work and use real bind parameters.
 *
 * Note: MikroORM installs type parsers that keep timestamptz values as
 * strings (`2025-01-01 12:00:00.123+00`); read them with `toDate()`.
 */
export function pgPool(orm: MikroORM): Promise<Pool> {
  return orm.em.getConnection().getNativeClient();
}

/** A timestamptz column read through the ORM pool (string) or a plain pool (Date). */
export function toDate(value: string | Date): Date;
export function toDate(value: string | Date | null): Date | null;
export function toDate(value: string | Date | null): Date | null {
  if (value === null) return null;
  return value instanceof Date ? value : new Date(value);
}

/**
 * A memoised `pgPool(orm)` for long-lived services: resolved once, retried
 * on the next call if it failed.
 */
export function poolOf(orm: MikroORM): () => Promise<Pool> {
  let pending: Promise<Pool> | undefined;
  return () =>
    (pending ??= pgPool(orm).catch((error: unknown) => {
      pending = undefined;
      throw error;
    }));
}
