import type { Pool } from "../sql.ts";
import type { SendingPaceStore } from "../../../capabilities/messages/ports.ts";

/**
 * The sending pace's token buckets in table sending_pace, one row per
 * provider. Taking a token is one statement (a refill-and-take UPDATE …
 * RETURNING), so the row is locked only for that statement, never across a
 * round trip; the elapsed time is the database's clock, so workers on
 * different machines agree on it.
 */
/** Named: every handoff runs it; each connection plans it once. */
const TAKE = {
  name: "sending_pace_take",
  text: `
  with bucket as (
    select provider,
           least($3::double precision,
                 tokens + greatest(0, extract(epoch from (clock_timestamp() - updated_at)))::double precision * $2::double precision) as available
      from sending_pace
     where provider = $1
       for update
  )
  update sending_pace as pace
     set tokens = case when bucket.available >= 1 then bucket.available - 1 else bucket.available end,
         updated_at = clock_timestamp()
    from bucket
   where pace.provider = bucket.provider
  returning bucket.available`,
};

export function postgresSendingPaceStore(db: () => Promise<Pool>): SendingPaceStore {
  return {
    async take(provider, ratePerSecond, burst) {
      const pool = await db();
      let { rows } = await pool.query<{ available: number }>({ ...TAKE, values: [provider, ratePerSecond, burst] });
      if (rows.length === 0) {
        // A new bucket starts full; a concurrent creator wins harmlessly.
        await pool.query(`insert into sending_pace (provider, tokens, updated_at) values ($1, $2, clock_timestamp()) on conflict (provider) do nothing`, [
          provider,
          burst,
        ]);
        ({ rows } = await pool.query<{ available: number }>({ ...TAKE, values: [provider, ratePerSecond, burst] }));
      }
      const available = rows[0]?.available;
      if (available === undefined) throw new Error(`sending pace: no bucket for ${provider}`);
      return { available: Number(available) };
    },
  };
}
