import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresRateLimitWindows, type PostgresRateLimitWindowsOptions } from "../adapters/postgres/rate-limit/postgres-rate-limit-windows.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { FixedWindowRateLimiter } from "../capabilities/rate-limit/index.ts";

/** The rate limiter shared by every API process using the database of `orm`. `close()` it before `orm.close()`. */
export function createRateLimiter(orm: MikroORM, options: PostgresRateLimitWindowsOptions = {}): FixedWindowRateLimiter {
  return new FixedWindowRateLimiter(new PostgresRateLimitWindows(poolOf(orm), options));
}
