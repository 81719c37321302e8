import { STATS_OUTCOMES } from "../../../capabilities/stats/ports.ts";

/**
 * The sending statistics' counting on the send path. The statement that
 * records a message's acceptance or a status move also writes its outcome
 * into message_stats_pending, in the same statement: one narrow insert,
 * so the counts never disagree with the message log and a read never scans
 * it. The fold (../stats/stats-fold.ts) moves those rows into the hourly
 * aggregates (message_stats_hour) in batches, off the send path.
 *
 * The fragments are spelled out (no text built at run time) so that the
 * schema test has PostgreSQL prepare the statements they end up in.
 */

/** `, counted as (...)`: after the CTE `inserted` (the new message row), its acceptance at its created_at. */
export const COUNT_ACCEPTED = `,
         counted as (
           insert into message_stats_pending (company_id, message_id, outcome, at)
           select s.company_id, s.id, 'accepted', s.created_at from inserted s
         )`;

/**
 * `, counted as (...)`: after the CTE `moved` (the message row, when the
 * move happened), its new status at the move's time ($4). A status that is
 * not an outcome (`processing`) counts nothing.
 */
export const COUNT_MOVED = `,
         counted as (
           insert into message_stats_pending (company_id, message_id, outcome, at)
           select s.company_id, s.id, s.status, $4::timestamptz from moved s
            where s.status = any('{accepted,sent,delivered,bounced,complained,rejected,failed,suppressed,deferred}'::text[])
         )`;

if (!COUNT_MOVED.includes(`'{${STATS_OUTCOMES.join(",")}}'`)) {
  throw new Error("message-stats.ts: the outcomes counted on a move are not STATS_OUTCOMES");
}
