import type { MikroORM } from "@mikro-orm/postgresql";
import { poolOf } from "../../adapters/postgres/sql.ts";
import { PostgresRateLimiter, type PostgresRateLimiterOptions } from "../../adapters/postgres/rate-limit/postgres-rate-limiter.ts";

export type { RateLimitDecision, RateLimiter } from "./types.ts";
export { PostgresRateLimiter, type PostgresRateLimiterOptions } from "../../adapters/postgres/rate-limit/postgres-rate-limiter.ts";

/** The rate limiter shared by every API process using the database of `orm`. */
export function createRateLimiter(orm: MikroORM, options: PostgresRateLimiterOptions = {}): PostgresRateLimiter {
  return new PostgresRateLimiter(poolOf(orm), options);
}
