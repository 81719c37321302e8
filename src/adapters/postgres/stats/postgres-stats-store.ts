import type { Pool } from "../sql.ts";
import { toDate } from "../sql.ts";
import { PostgresStatsFold } from "./stats-fold.ts";
import {
  type OutcomeCounts,
  STATS_OUTCOMES,
  type StatsLeadersQuery,
  type StatsSegment,
  type StatsSeriesQuery,
  type StatsStore,
  type StoredBucket,
  type StoredLeader,
} from "../../../capabilities/stats/ports.ts";

/**
 * The StatsStore port on PostgreSQL: sums of message_stats_hour. Each read
 * walks the primary key (company_id, dimension, dimension_value, hour,
 * shard) over the range: at most 24 x 8 rows a day, whatever the company's
 * volume.
 *
 * Each read folds the outcomes still pending first (stats-fold.ts; usually
 * the last second's, nothing when the periodic fold just ran), so a read
 * counts every outcome recorded before it.
 */

type Db = () => Promise<Pool>;

type CountsRow = Record<(typeof STATS_OUTCOMES)[number], string>;

/** Every outcome summed (spelled out: the schema test prepares the statements it is in). */
const SUMS = "sum(accepted)::bigint as accepted, sum(sent)::bigint as sent, sum(delivered)::bigint as delivered, sum(bounced)::bigint as bounced, sum(complained)::bigint as complained, sum(rejected)::bigint as rejected, sum(failed)::bigint as failed, sum(suppressed)::bigint as suppressed, sum(deferred)::bigint as deferred";

function countsOf(row: CountsRow): OutcomeCounts {
  return Object.fromEntries(STATS_OUTCOMES.map((name) => [name, Number(row[name])])) as Record<(typeof STATS_OUTCOMES)[number], number>;
}

function dimensionOf(segment: StatsSegment): [number, string] {
  switch (segment.kind) {
    case "all":
      return [0, ""];
    case "tag":
      return [1, segment.tag];
    case "template":
      return [2, segment.templateId];
  }
}

/** The statement of a series read, also run bare by bench/stats-read.ts. */
export const STATS_SERIES_SQL = `select date_bin(make_interval(hours => $6::int), hour, timestamptz '2000-01-01 00:00:00+00') as start, ${SUMS}
   from message_stats_hour
  where company_id = $1 and dimension = $2 and dimension_value = $3 and hour >= $4 and hour < $5
  group by 1 order by 1`;

export class PostgresStatsStore implements StatsStore {
  readonly #db: Db;
  readonly #fold: PostgresStatsFold;

  constructor(db: Db) {
    this.#db = db;
    this.#fold = new PostgresStatsFold(db);
  }

  async series(query: StatsSeriesQuery): Promise<StoredBucket[]> {
    await this.#fold.fold();
    const pool = await this.#db();
    const [dimension, value] = dimensionOf(query.segment);
    // Unnamed: planned for its own values each time (a generic plan cannot tell a rare tag from the company's whole mail).
    const { rows } = await pool.query<CountsRow & { start: string | Date }>({
      text: STATS_SERIES_SQL,
      values: [query.companyId, dimension, value, query.since, query.until, query.intervalHours],
    });
    return rows.map((row) => ({ start: toDate(row.start), counts: countsOf(row) }));
  }

  /**
   * Tags and templates summed over the range, each ranked by accepted
   * messages and, with at least `minSent` handed over, by bounce rate; only
   * the first `limit` of either ranking come back.
   */
  async leaders(query: StatsLeadersQuery): Promise<StoredLeader[]> {
    await this.#fold.fold();
    const pool = await this.#db();
    const { rows } = await pool.query<CountsRow & { dimension: number; dimension_value: string; volume_rank: string; bounce_rank: string | null }>({
      text: `with summed as (
               select dimension, dimension_value, ${SUMS}
                 from message_stats_hour
                where company_id = $1 and dimension in (1, 2) and hour >= $2 and hour < $3
                group by 1, 2
             ),
             ranked as (
               select summed.*,
                      row_number() over (partition by dimension order by accepted desc, dimension_value) as volume_rank,
                      case when sent >= $5 then
                        row_number() over (partition by dimension, sent >= $5 order by bounced::double precision / nullif(sent, 0) desc nulls last, sent desc, dimension_value)
                      end as bounce_rank
                 from summed
             )
             select * from ranked where volume_rank <= $4 or bounce_rank <= $4`,
      values: [query.companyId, query.since, query.until, query.limit, query.minSent],
    });
    return rows.map((row) => ({
      kind: row.dimension === 1 ? "tag" : "template",
      key: row.dimension_value,
      counts: countsOf(row),
      volumeRank: Number(row.volume_rank),
      bounceRank: row.bounce_rank === null ? null : Number(row.bounce_rank),
    }));
  }
}
