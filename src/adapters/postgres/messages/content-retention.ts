import type { Pool } from "../sql.ts";
import type { ContentRetentionStore } from "../../../capabilities/messages/lifecycle/content-retention.ts";
import { BEFORE_HANDOFF } from "../../../capabilities/messages/statuses.ts";

/**
 * The content retention on PostgreSQL: one statement per batch deletes the
 * files (message_attachment) and clears html and text_body of the oldest
 * messages still holding content (message_content_kept_index), marking
 * them content_removed_at. Rows another run has locked are skipped, so
 * API processes running it at once never wait on each other. Like the
 * outbox scan, it looks across companies; each row is then changed by its
 * company id and id.
 */
export function postgresContentRetention(db: () => Promise<Pool>): ContentRetentionStore {
  return {
    async removeContentBefore(before, limit) {
      const pool = await db();
      const { rowCount } = await pool.query({
        text: `with expired as (
                 select id, company_id from message
                  where content_removed_at is null and created_at < $1 and status <> all($3::text[])
                  order by created_at
                  limit $2
                  for update skip locked
               ), files as (
                 delete from message_attachment a using expired e where a.company_id = e.company_id and a.message_id = e.id
               )
               update message m set html = null, text_body = null, content_removed_at = now()
                 from expired e
                where m.company_id = e.company_id and m.id = e.id`,
        values: [before, limit, BEFORE_HANDOFF],
      });
      return rowCount ?? 0;
    },
  };
}
