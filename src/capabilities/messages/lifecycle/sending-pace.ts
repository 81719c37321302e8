import { type Db, inTransaction } from "../../../adapters/postgres/messages/message-store.ts";

/**
 * The sending pace: a token bucket per provider, kept in PostgreSQL so every
 * worker shares it. `reserve` takes one token when there is one (answer 0)
 * or tells how long to wait for the next one; the workflow then sleeps
 * durably (a Temporal timer) and the message is visibly `deferred`.
 */
export interface PaceSettings {
  /** Messages per second the provider accepts. */
  readonly ratePerSecond: number;
  /** Messages that may go at once after a quiet period. */
  readonly burst: number;
}

export class SendingPace {
  readonly #db: Db;
  readonly #settings: PaceSettings;

  constructor(db: Db, settings: PaceSettings) {
    if (!(settings.ratePerSecond > 0) || !(settings.burst >= 1)) throw new Error("sending pace: rate must be > 0 and burst >= 1");
    this.#db = db;
    this.#settings = settings;
  }

  /** Milliseconds to wait before trying again; 0 means a slot was taken. */
  async reserve(provider: string): Promise<number> {
    const { ratePerSecond, burst } = this.#settings;
    return inTransaction(this.#db, async (tx) => {
      await tx.query(
        `insert into sending_pace (provider, tokens, updated_at) values ($1, $2, now()) on conflict (provider) do nothing`,
        [provider, burst],
      );
      // The row lock serialises workers; the clock is the database's, so
      // workers on different machines agree on elapsed time.
      const { rows } = await tx.query<{ tokens: number }>(
        `select least($2::double precision,
                tokens + extract(epoch from (clock_timestamp() - updated_at)) * $3::double precision) as tokens
           from sending_pace where provider = $1 for update`,
        [provider, burst, ratePerSecond],
      );
      const available = Number(rows[0]?.tokens ?? 0);
      const take = available >= 1;
      await tx.query(`update sending_pace set tokens = $2, updated_at = clock_timestamp() where provider = $1`, [
        provider,
        take ? available - 1 : available,
      ]);
      return take ? 0 : Math.ceil(((1 - available) / ratePerSecond) * 1000);
    });
  }
}
