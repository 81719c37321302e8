import type { KeyUsageStore } from "../../../capabilities/accounts/ports.ts";
import type { Pool } from "../sql.ts";

/**
 * "Last used" of API keys: one UPDATE per batch. GREATEST only moves
 * last_used_at forward, so processes flushing in any order never move it back.
 */
export class PostgresKeyUsageStore implements KeyUsageStore {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async writeLastUsed(batch: ReadonlyMap<string, Date>): Promise<void> {
    if (batch.size === 0) return;
    const ids = [...batch.keys()];
    const times = [...batch.values()].map((at) => at.toISOString());
    const pool = await this.#pool();
    await pool.query(
      `update api_key as k
          set last_used_at = greatest(k.last_used_at, u.used_at)
         from unnest($1::uuid[], $2::timestamptz[]) as u (id, used_at)
        where k.id = u.id`,
      [ids, times],
    );
  }
}
