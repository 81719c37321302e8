import type { RateLimitWindows, WindowCount } from "../../../capabilities/rate-limit/ports.ts";
import type { Pool } from "../sql.ts";

export interface PostgresRateLimitWindowsOptions {
  /** Failures of the background cleanup. Default: console.error. */
  readonly onCleanupError?: (error: unknown) => void;
}

/** Windows are one minute; rows older than two are of no use to anyone. */
const CLEANUP_EVERY_MS = 60_000;

interface CountRow {
  count: number;
  reset_ms: number;
}

/**
 * Fixed one-minute windows counted in PostgreSQL, so every API process on
 * the same database shares one budget per bucket.
 *
 * One statement per request: an upsert that creates the window's row or adds
 * one to it, atomically (concurrent requests serialise on the row), and
 * returns the new count. The window is computed from the database clock, so
 * processes with slightly different clocks still agree on it.
 */
const ADD = {
  name: "rate_limit_consume",
  text: `insert into rate_limit as r (bucket, window_start, count)
         values ($1, date_trunc('minute', now()), 1)
         on conflict (bucket, window_start) do update set count = r.count + 1
         returning r.count,
                   (extract(epoch from (r.window_start + interval '1 minute' - now())) * 1000)::float8 as reset_ms`,
};

export class PostgresRateLimitWindows implements RateLimitWindows {
  readonly #pool: () => Promise<Pool>;
  readonly #onCleanupError: (error: unknown) => void;
  #lastCleanup = 0;
  #cleanup: Promise<unknown> = Promise.resolve();

  constructor(pool: () => Promise<Pool>, options: PostgresRateLimitWindowsOptions = {}) {
    this.#pool = pool;
    this.#onCleanupError = options.onCleanupError ?? ((error) => console.error("rate limit cleanup failed", error));
  }

  async add(bucket: string): Promise<WindowCount> {
    const pool = await this.#pool();
    const { rows } = await pool.query<CountRow>({ ...ADD, values: [bucket] });
    const row = rows[0];
    if (!row) throw new Error("rate limit upsert returned no row");
    this.#maybeCleanup();
    return { count: row.count, resetMs: row.reset_ms };
  }

  /** Deletes windows that ended more than a minute ago; returns how many. */
  async cleanup(): Promise<number> {
    const pool = await this.#pool();
    const result = await pool.query(`delete from rate_limit where window_start < now() - interval '2 minutes'`);
    return result.rowCount ?? 0;
  }

  /** Waits for a background cleanup in progress (call before closing the ORM). */
  async close(): Promise<void> {
    await this.#cleanup;
  }

  /** At most once a minute per process, off the request's path. */
  #maybeCleanup(): void {
    const now = Date.now();
    if (now - this.#lastCleanup < CLEANUP_EVERY_MS) return;
    this.#lastCleanup = now;
    this.#cleanup = this.cleanup().catch((error: unknown) => this.#onCleanupError(error));
  }
}
