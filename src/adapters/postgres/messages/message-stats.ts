import { STATS_OUTCOMES } from "../../../capabilities/stats/ports.ts";

/**
 * The sending statistics' aggregates (table message_stats_hour), kept by
 * the statements that record a message's acceptance and its status moves
 * (message-store.ts): each adds its outcome to the hour's row of the
 * company, of each of the message's tag keys and of its template, in the
 * same statement, so the counts and the message log never disagree and a
 * read never scans the log.
 *
 * A message with several tags counts once under each of them (and once for
 * the company): tag rows answer "how did the mail with this tag do", and
 * their sum is not the company's total.
 *
 * The fragments are spelled out (no text built at run time) so that the
 * schema test has PostgreSQL prepare the statements they end up in. Their
 * outcome columns are STATS_OUTCOMES, in its order (checked below).
 */

/** Rows per company and hour, from the message id's hash: concurrent moves of one company rarely wait for one row lock. */
export const STATS_SHARDS = 8;

/** `, counted as (...)`: after the CTE `inserted` (the new message row), counts its acceptance at its created_at. */
export const COUNT_ACCEPTED = `,
         counted as (
           insert into message_stats_hour (company_id, dimension, dimension_value, hour, shard, accepted, sent, delivered, bounced, complained, rejected, failed, suppressed, deferred)
           select s.company_id, d.dimension, d.value, date_bin('1 hour', s.created_at, timestamptz '2000-01-01 00:00:00+00'),
                  (hashtext(s.id::text) & 7)::smallint, 1, 0, 0, 0, 0, 0, 0, 0, 0
             from inserted s
             cross join lateral (
               select 0::smallint, ''::text
               union all select 1::smallint, k from jsonb_object_keys(s.tags) k
               union all select 2::smallint, s.template_id::text where s.template_id is not null
             ) d(dimension, value)
           on conflict (company_id, dimension, dimension_value, hour, shard) do update set accepted = message_stats_hour.accepted + 1
         )`;

/**
 * `, counted as (...)`: after the CTE `moved` (the message row, when the
 * move happened), counts its new status at the move's time ($4). A status
 * that is not an outcome (`processing`) adds nothing.
 */
export const COUNT_MOVED = `,
         counted as (
           insert into message_stats_hour (company_id, dimension, dimension_value, hour, shard, accepted, sent, delivered, bounced, complained, rejected, failed, suppressed, deferred)
           select s.company_id, d.dimension, d.value, date_bin('1 hour', $4::timestamptz, timestamptz '2000-01-01 00:00:00+00'),
                  (hashtext(s.id::text) & 7)::smallint,
                  (s.status = 'accepted')::int, (s.status = 'sent')::int, (s.status = 'delivered')::int, (s.status = 'bounced')::int, (s.status = 'complained')::int, (s.status = 'rejected')::int, (s.status = 'failed')::int, (s.status = 'suppressed')::int, (s.status = 'deferred')::int
             from moved s
             cross join lateral (
               select 0::smallint, ''::text
               union all select 1::smallint, k from jsonb_object_keys(s.tags) k
               union all select 2::smallint, s.template_id::text where s.template_id is not null
             ) d(dimension, value)
            where s.status = any('{accepted,sent,delivered,bounced,complained,rejected,failed,suppressed,deferred}'::text[])
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
         )`;

for (const fragment of [COUNT_ACCEPTED, COUNT_MOVED]) {
  if (!fragment.includes(`shard, ${STATS_OUTCOMES.join(", ")})`) || !fragment.includes("& " + String(STATS_SHARDS - 1) + ")")) {
    throw new Error("message-stats.ts: the counting fragments do not match STATS_OUTCOMES or STATS_SHARDS");
  }
}
