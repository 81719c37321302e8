import type { Pool, PoolClient } from "../sql.ts";
import { inTransaction } from "../transaction.ts";
import type { SendingPaceStore } from "../../../capabilities/messages/ports.ts";

/**
 * The sending pace's token buckets in table sending_pace, one row per
 * provider. Taking a token is one statement (a refill-and-take UPDATE …
 * RETURNING), so the row is locked only for that statement, never across a
 * round trip; the elapsed time is the database's clock, so workers on
 * different machines agree on it.
 *
 * Fair between tenants (a take that names its company): in one short
 * transaction under the bucket's row lock, the company's row of
 * sending_pace_company records that it asked; while any company that waits
 * (asked recently, not served since) was served less recently than this
 * one, this one takes nothing (the tokens wait for those, up to the burst)
 * and is told to come back after one interval per such company. Served:
 * `last_served_at` moves to now and the company goes to the back. A
 * company that stopped asking stops counting as waiting after
 * waitingWindowSeconds.
 *
 * A take that must `keep` tokens (campaign copies, the lower priority)
 * takes one only when more than `keep` are there, so the tokens below it
 * are left for transactional mail.
 */
/** Named: every handoff runs it; each connection plans it once. */
const TAKE = {
  name: "sending_pace_take_keep",
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
     set tokens = case when bucket.available >= 1 + $4::double precision then bucket.available - 1 else bucket.available end,
         updated_at = clock_timestamp()
    from bucket
   where pace.provider = bucket.provider
  returning bucket.available`,
};

/** The bucket, refilled, locked for this transaction (nothing taken yet). */
const LOCK_REFILLED = {
  name: "sending_pace_lock_refilled",
  text: `
  select least($3::double precision,
               tokens + greatest(0, extract(epoch from (clock_timestamp() - updated_at)))::double precision * $2::double precision) as available
    from sending_pace
   where provider = $1
     for update`,
};

/** This company asked: its row, and how many waiting companies are owed a token before it. */
const ASK = {
  name: "sending_pace_company_ask",
  text: `
  with me as (
    insert into sending_pace_company (provider, company_id, asked_at)
    values ($1, $2, clock_timestamp())
    on conflict (provider, company_id) do update set asked_at = excluded.asked_at
    returning coalesce(last_served_at, '-infinity'::timestamptz) as served, coalesce(waiting_since, clock_timestamp()) as since
  )
  select count(other.company_id)::int as ahead
    from me
    left join sending_pace_company other
      on other.provider = $1
     and other.company_id <> $2
     and other.waiting_since is not null
     and other.asked_at > clock_timestamp() - make_interval(secs => $3::double precision)
     and (coalesce(other.last_served_at, '-infinity'::timestamptz) < me.served
          or (coalesce(other.last_served_at, '-infinity'::timestamptz) = me.served and other.waiting_since < me.since))`,
};

/** How long a company that asked and was not served counts as waiting: its workflow asks again after the wait it was told. */
function waitingWindowSeconds(ratePerSecond: number): number {
  // Long enough for a workflow's timer and its next activity on a busy worker; the longest the others wait for one that gave up.
  return Math.max(5, 3 / ratePerSecond);
}

async function ensureBucket(client: Pool | PoolClient, provider: string, burst: number): Promise<void> {
  // A new bucket starts full; a concurrent creator wins harmlessly.
  await client.query(`insert into sending_pace (provider, tokens, updated_at) values ($1, $2, clock_timestamp()) on conflict (provider) do nothing`, [
    provider,
    burst,
  ]);
}

async function fairTake(db: () => Promise<Pool>, provider: string, companyId: string, ratePerSecond: number, burst: number) {
  return inTransaction(db, async (client) => {
    let { rows } = await client.query<{ available: number }>({ ...LOCK_REFILLED, values: [provider, ratePerSecond, burst] });
    if (rows.length === 0) {
      await ensureBucket(client, provider, burst);
      ({ rows } = await client.query<{ available: number }>({ ...LOCK_REFILLED, values: [provider, ratePerSecond, burst] }));
    }
    const available = Number(rows[0]?.available);
    if (!Number.isFinite(available)) throw new Error(`sending pace: no bucket for ${provider}`);
    const asked = await client.query<{ ahead: number }>({ ...ASK, values: [provider, companyId, waitingWindowSeconds(ratePerSecond)] });
    const ahead = Number(asked.rows[0]?.ahead ?? 0);
    // Strict turns: with companies ahead, `needed` is out of reach (one token more than there are, and one per company ahead).
    const needed = ahead === 0 ? 1 : Math.max(available, 1) + ahead;
    const taken = available >= needed;
    await client.query(`update sending_pace set tokens = $2, updated_at = clock_timestamp() where provider = $1`, [provider, taken ? available - 1 : available]);
    await client.query(
      taken
        ? `update sending_pace_company set last_served_at = clock_timestamp(), waiting_since = null where provider = $1 and company_id = $2`
        : `update sending_pace_company set waiting_since = coalesce(waiting_since, clock_timestamp()) where provider = $1 and company_id = $2`,
      [provider, companyId],
    );
    return { available, needed };
  });
}

export function postgresSendingPaceStore(db: () => Promise<Pool>): SendingPaceStore {
  return {
    async take(provider, ratePerSecond, burst, companyId, keep = 0) {
      if (companyId !== undefined) return fairTake(db, provider, companyId, ratePerSecond, burst);
      const pool = await db();
      let { rows } = await pool.query<{ available: number }>({ ...TAKE, values: [provider, ratePerSecond, burst, keep] });
      if (rows.length === 0) {
        await ensureBucket(pool, provider, burst);
        ({ rows } = await pool.query<{ available: number }>({ ...TAKE, values: [provider, ratePerSecond, burst, keep] }));
      }
      const available = rows[0]?.available;
      if (available === undefined) throw new Error(`sending pace: no bucket for ${provider}`);
      return { available: Number(available), needed: 1 + keep };
    },
  };
}
