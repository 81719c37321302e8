import { ApiError } from "../../../contract/api-error.ts";
import type { Pool } from "../../../adapters/postgres/sql.ts";
import { createCursorCodec } from "./cursor.ts";
import { filterFingerprint, parseListOptions } from "./filters.ts";
import { eventsQuery, listQuery, messageQuery, type EventRow, type MessageRow } from "../../../adapters/postgres/messages/message-log-queries.ts";
import { eventsByMessage, messageRecord } from "../../../adapters/postgres/messages/message-log-rows.ts";
import type { ListMessagesOptions, MessageEventRecord, MessagePage, MessageRecord } from "./types.ts";

/** The read side of the message log: GET /mail/v1/messages(/{id}). */
export interface MessageReader {
  /** One message of the company with its events, oldest first; NOT_FOUND when unknown, malformed or another company's. */
  getMessage(companyId: string, id: string): Promise<MessageRecord>;
  /** A page of the company's messages, newest first (created_at desc, id desc). */
  listMessages(companyId: string, options?: ListMessagesOptions): Promise<MessagePage>;
}

export interface MessageReaderOptions {
  /** HMAC key of the list cursors. Changing it invalidates cursors in flight (callers restart from page one). */
  readonly cursorSecret: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "message not found");
}

/**
 * Raw SQL on the pg pool rather than the ORM: these are the hot reads of the
 * API, each a single indexed statement (see queries.ts for the plans).
 */
export function createMessageReader(pool: () => Promise<Pool>, options: MessageReaderOptions): MessageReader {
  const cursors = createCursorCodec(options.cursorSecret);

  async function loadEvents(db: Pool, companyId: string, ids: readonly string[]): Promise<Map<string, MessageEventRecord[]>> {
    if (ids.length === 0) return new Map();
    const { rows } = await db.query<EventRow>(eventsQuery(companyId, ids));
    return eventsByMessage(rows);
  }

  return {
    async getMessage(companyId, id) {
      // Checked here so that a malformed id answers like an unknown one
      // instead of failing the uuid cast in PostgreSQL (a 500).
      if (!UUID.test(id)) throw notFound();
      const db = await pool();
      const { rows } = await db.query<MessageRow>(messageQuery(companyId, id));
      const row = rows[0];
      if (!row) throw notFound();
      const events = await loadEvents(db, companyId, [row.id]);
      return messageRecord(row, events.get(row.id) ?? []);
    },

    async listMessages(companyId, listOptions = {}) {
      const { limit, filters } = parseListOptions(listOptions);
      const fingerprint = filterFingerprint(filters);
      // An empty cursor is what a REST client sends for "?cursor=": the first page.
      const after = listOptions.cursor ? cursors.decode(listOptions.cursor, companyId, fingerprint) : null;

      const db = await pool();
      const { rows } = await db.query<MessageRow>(listQuery(companyId, filters, after, limit + 1));
      const page = rows.slice(0, limit);
      const events = await loadEvents(
        db,
        companyId,
        page.map((row) => row.id),
      );
      const last = page.at(-1);
      return {
        items: page.map((row) => messageRecord(row, events.get(row.id) ?? [])),
        nextCursor:
          rows.length > limit && last
            ? cursors.encode(companyId, fingerprint, { createdAt: last.position_at, id: last.id })
            : null,
      };
    },
  };
}
