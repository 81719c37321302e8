import type { Pool, PoolClient } from "./sql.ts";

/**
 * The one transaction helper of the PostgreSQL adapters.
 *
 * Runs `work` in a transaction on one pooled connection; a thrown error
 * rolls back. `work` may also decide to roll back without throwing by
 * answering `rollback(value)` (for example a charge refused for want of
 * credit). A connection whose ROLLBACK failed is in an unknown state: it is
 * destroyed, never given back to the pool.
 *
 * The default isolation (READ COMMITTED) is what the conditional UPDATEs
 * rely on: a blocked UPDATE re-checks its condition on the row's newest
 * version.
 */
export async function inTransaction<T>(pool: Pool | (() => Promise<Pool>), work: (client: PoolClient) => Promise<T | RolledBack<T>>): Promise<T> {
  const client = await (typeof pool === "function" ? await pool() : pool).connect();
  let broken: Error | undefined;
  try {
    await client.query("begin");
    const outcome = await work(client);
    if (outcome instanceof RolledBack) {
      await client.query("rollback");
      return outcome.value;
    }
    await client.query("commit");
    return outcome;
  } catch (error: unknown) {
    await client.query("rollback").catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The answer of a unit of work that decided to drop its writes. */
export class RolledBack<T> {
  readonly value: T;
  constructor(value: T) {
    this.value = value;
  }
}

export function rollback<T>(value: T): RolledBack<T> {
  return new RolledBack(value);
}
