import type { Pool } from "pg";

/**
 * What GET /metrics reads from PostgreSQL at scrape time, each family in
 * one grouped query over every company (operators' totals, never per
 * tenant). Counts of small, bounded label sets: message statuses, delivery
 * states and attempt outcomes. The counts scan their tables (or an index of
 * them) at every scrape: scrape every 15 s or more on large tables.
 */

async function counts(pool: Pool, sql: string): Promise<Map<string, number>> {
  const result = await pool.query<{ label: string; count: string }>(sql);
  return new Map(result.rows.map((row) => [row.label, Number(row.count)]));
}

/** Most handoffs read per scrape; the rest wait for the next one. */
const HANDOFFS_PER_SCRAPE = 10_000;

export function postgresGauges(poolOf: () => Promise<Pool>, poolMax: number) {
  // The last `sent` event observed; unset until the first scrape, which starts from now.
  let lastEventId: string | undefined;
  return {
    /**
     * Seconds from acceptance to handoff of the messages handed off since
     * the previous scrape, from their `sent` events (message_event ids only
     * grow, and the primary key finds the new ones).
     */
    async handoffSecondsSince(): Promise<number[]> {
      const pool = await poolOf();
      if (lastEventId === undefined) {
        const start = await pool.query<{ id: string }>(`select coalesce(max(id), 0)::text as id from message_event`);
        lastEventId = start.rows[0]?.id ?? "0";
        return [];
      }
      const result = await pool.query<{ id: string; seconds: number }>(
        `select e.id::text as id, extract(epoch from e.at - m.created_at)::float8 as seconds
           from message_event e
           join message m on m.company_id = e.company_id and m.id = e.message_id
          where e.id > $1 and e.type = 'sent'
          order by e.id
          limit ${HANDOFFS_PER_SCRAPE}`,
        [lastEventId],
      );
      const last = result.rows.at(-1);
      if (last) lastEventId = last.id;
      return result.rows.map((row) => Math.max(0, row.seconds));
    },
    async messagesByStatus() {
      return counts(await poolOf(), `select status as label, count(*) as count from message group by status`);
    },
    async webhookDeliveriesByState() {
      return counts(await poolOf(), `select state as label, count(*) as count from webhook_delivery group by state`);
    },
    async webhookAttemptsByOutcome() {
      // A 2xx is a success; another status an HTTP error; no status, its error class (timeout, ...).
      return counts(
        await poolOf(),
        `select case
                  when status between 200 and 299 then 'success'
                  when status is not null then 'http_error'
                  else coalesce(error_class, 'error')
                end as label,
                count(*) as count
           from webhook_attempt
          group by 1`,
      );
    },
    async pool() {
      const pool = await poolOf();
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: poolMax };
    },
  };
}
