import type { Pool } from "../sql.ts";
import type { MessageLogStore } from "../../../capabilities/messages/ports.ts";
import type { MessageEventRecord } from "../../../capabilities/messages/read/types.ts";
import { eventsQuery, listQuery, messageQuery, type EventRow, type MessageRow } from "./message-log-queries.ts";
import { eventsByMessage, messageRecord } from "./message-log-rows.ts";

/**
 * The MessageLogStore port on PostgreSQL. Raw SQL on the pg pool rather than the
 * ORM: these are the hot reads of the API, each a single indexed statement
 * (see message-log-queries.ts for the plans); a page costs two statements,
 * its messages and all their events.
 */
export function postgresMessageLog(pool: () => Promise<Pool>): MessageLogStore {
  async function loadEvents(db: Pool, companyId: string, ids: readonly string[]): Promise<Map<string, MessageEventRecord[]>> {
    if (ids.length === 0) return new Map();
    const { rows } = await db.query<EventRow>(eventsQuery(companyId, ids));
    return eventsByMessage(rows);
  }

  return {
    async message(companyId, id) {
      const db = await pool();
      const { rows } = await db.query<MessageRow>(messageQuery(companyId, id));
      const row = rows[0];
      if (!row) return undefined;
      const events = await loadEvents(db, companyId, [row.id]);
      return messageRecord(row, events.get(row.id) ?? []);
    },

    async page(companyId, filters, after, limit) {
      const db = await pool();
      const { rows } = await db.query<MessageRow>(listQuery(companyId, filters, after, limit));
      const events = await loadEvents(
        db,
        companyId,
        rows.map((row) => row.id),
      );
      return rows.map((row) => ({
        item: messageRecord(row, events.get(row.id) ?? []),
        position: { createdAt: row.position_at, id: row.id },
      }));
    },
  };
}
