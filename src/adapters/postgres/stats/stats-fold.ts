import { STATS_OUTCOMES } from "../../../capabilities/stats/ports.ts";
import type { Pool } from "../sql.ts";
import { inTransaction } from "../transaction.ts";

/**
 * The fold: moves the outcomes written on the send path
 * (message_stats_pending, ../messages/message-stats.ts) into the hourly
 * aggregates (message_stats_hour) that the statistics read.
 *
 * Each batch deletes its pending rows and adds them to the aggregates in
 * one statement, so a row is counted exactly once: a crash rolls both back.
 * Every outcome counts in the hour it happened for the company, for each of
 * the message's tag keys and for its template (a message with several tags
 * counts once under each: tag rows answer "how did the mail with this tag
 * do", and their sum is not the company's total). The row of an hour is
 * split in eight shards by the message id.
 *
 * Folds are serialised by a transaction-level advisory lock: the periodic
 * pass and the one a read runs first never count the same row twice, and
 * their upserts never wait on each other's rows in a different order.
 */

/** Pending rows per batch: one statement's work, a few hundred milliseconds at most. */
const BATCH = 20_000;

/**
 * The aggregate rows a message `m` counts in, as `d(dimension, value)`: the
 * company's (0, ''), one per tag key (1, key), its template's (2, id).
 */
export const MESSAGE_DIMENSIONS = `cross join lateral (
        select 0::smallint, ''::text
        union all select 1::smallint, k from jsonb_object_keys(m.tags) k
        union all select 2::smallint, m.template_id::text where m.template_id is not null
      ) d(dimension, value)`;

const FOLD_SQL = `with taken as (
    delete from message_stats_pending
     where id in (select id from message_stats_pending order by id limit $1)
    returning company_id, message_id, outcome, at
  ),
  counted as (
    insert into message_stats_hour (company_id, dimension, dimension_value, hour, shard, accepted, sent, delivered, bounced, complained, rejected, failed, suppressed, deferred)
    select t.company_id, d.dimension, d.value, date_bin('1 hour', t.at, timestamptz '2000-01-01 00:00:00+00'), (hashtext(t.message_id::text) & 7)::smallint,
           count(*) filter (where t.outcome = 'accepted'), count(*) filter (where t.outcome = 'sent'),
           count(*) filter (where t.outcome = 'delivered'), count(*) filter (where t.outcome = 'bounced'),
           count(*) filter (where t.outcome = 'complained'), count(*) filter (where t.outcome = 'rejected'),
           count(*) filter (where t.outcome = 'failed'), count(*) filter (where t.outcome = 'suppressed'),
           count(*) filter (where t.outcome = 'deferred')
      from taken t
      join message m on m.company_id = t.company_id and m.id = t.message_id
      ${MESSAGE_DIMENSIONS}
     group by 1, 2, 3, 4, 5
     order by 1, 2, 3, 4, 5
    on conflict (company_id, dimension, dimension_value, hour, shard) do update
       set accepted = message_stats_hour.accepted + excluded.accepted,
           sent = message_stats_hour.sent + excluded.sent,
           delivered = message_stats_hour.delivered + excluded.delivered,
           bounced = message_stats_hour.bounced + excluded.bounced,
           complained = message_stats_hour.complained + excluded.complained,
           rejected = message_stats_hour.rejected + excluded.rejected,
           failed = message_stats_hour.failed + excluded.failed,
           suppressed = message_stats_hour.suppressed + excluded.suppressed,
           deferred = message_stats_hour.deferred + excluded.deferred
  )
  select count(*)::int as folded from taken`;

if (!FOLD_SQL.includes(`shard, ${STATS_OUTCOMES.join(", ")})`)) {
  throw new Error("stats-fold.ts: the aggregate's columns are not STATS_OUTCOMES");
}

export class PostgresStatsFold {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  /** Folds every pending outcome, batch after batch; answers how many rows it folded. */
  async fold(): Promise<number> {
    // Most reads find nothing pending: one cheap look instead of a transaction.
    const pool = await this.#pool();
    const { rows: pending } = await pool.query<{ some: boolean }>({ name: "message_stats_pending_any", text: "select exists (select 1 from message_stats_pending) as some" });
    if (pending[0]?.some !== true) return 0;
    let total = 0;
    for (;;) {
      const folded = await inTransaction(this.#pool, async (client) => {
        // Keyed from a text, as the stores' other advisory locks are.
        await client.query("select pg_advisory_xact_lock(hashtextextended('message-stats-fold', 0))");
        const { rows } = await client.query<{ folded: number }>({ name: "message_stats_fold", text: FOLD_SQL, values: [BATCH] });
        return rows[0]?.folded ?? 0;
      });
      total += folded;
      if (folded < BATCH) return total;
    }
  }
}
