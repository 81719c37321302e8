import type { Pool, PoolClient } from "../sql.ts";

/** What a unit of work decided: keep its writes (commit) or drop them (rollback), and its result. */
export interface Outcome<T> {
  readonly commit: boolean;
  readonly value: T;
}

/**
 * Runs `work` in a transaction on one pooled connection. A thrown error
 * rolls back too. The default isolation (READ COMMITTED) is what the credit
 * statements rely on: a blocked UPDATE re-checks its condition on the row's
 * newest version.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<Outcome<T>>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("begin");
    const outcome = await work(client);
    await client.query(outcome.commit ? "commit" : "rollback");
    return outcome.value;
  } catch (error: unknown) {
    await client.query("rollback").catch((rollbackError: unknown) => {
      // The connection is in an unknown state: do not give it back to the pool.
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
