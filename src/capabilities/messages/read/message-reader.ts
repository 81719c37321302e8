import { ApiError } from "../../../contract/api-error.ts";
import type { MessageLog } from "../ports.ts";
import { createCursorCodec } from "./cursor.ts";
import { filterFingerprint, parseListOptions } from "./filters.ts";
import type { ListMessagesOptions, MessagePage, MessageRecord } from "./types.ts";

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

export function createMessageReader(log: MessageLog, options: MessageReaderOptions): MessageReader {
  const cursors = createCursorCodec(options.cursorSecret);

  return {
    async getMessage(companyId, id) {
      // Checked here so that a malformed id answers like an unknown one
      // instead of failing the uuid cast in PostgreSQL (a 500).
      if (!UUID.test(id)) throw notFound();
      const message = await log.message(companyId, id);
      if (!message) throw notFound();
      return message;
    },

    async listMessages(companyId, listOptions = {}) {
      const { limit, filters } = parseListOptions(listOptions);
      const fingerprint = filterFingerprint(filters);
      // An empty cursor is what a REST client sends for "?cursor=": the first page.
      const after = listOptions.cursor ? cursors.decode(listOptions.cursor, companyId, fingerprint) : null;

      const { items, more } = await log.page(companyId, filters, after, limit);
      const last = items.at(-1);
      return {
        items: items.map((item) => item.record),
        nextCursor: more && last ? cursors.encode(companyId, fingerprint, last.position) : null,
      };
    },
  };
}
