import { ApiError } from "../../../contract/api-error.ts";
import type { KeysetCursorKind } from "../../shared/keyset-cursor.ts";
import { filterFingerprint, KeysetPager, type Page } from "../../shared/paging.ts";
import type { MessageContentStore, MessageLogStore } from "../ports.ts";
import { fingerprintedFilters, parseListOptions } from "./filters.ts";
import type { GetMessageCommand, ListMessagesCommand, MessageContentRecord, MessageRecord } from "./types.ts";
import { isUuid } from "../../shared/uuid.ts";

export interface MessageLogDependencies {
  readonly store: MessageLogStore;
  readonly contents: MessageContentStore;
  /** HMAC key of the list cursors. Changing it invalidates cursors in flight (callers restart from page one). */
  readonly cursorSecret: string;
}

/** The cursors of GET /mail/v1/messages (the paging kit's one codec, with this list's context). */
export const MESSAGE_LOG_CURSOR: KeysetCursorKind = {
  context: "mail.v1.message-log.cursor.v1",
  label: "message log",
  filters: "status, q, since, tag and recipient",
};

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "message not found");
}

/**
 * The read side of the messages: GET /mail/v1/messages(/{id}), and the
 * content of a message as sent (GetMessageContent, for the administration
 * screen). A malformed id answers like an unknown one, checked here rather
 * than failing the uuid cast in PostgreSQL (a 500).
 */
export class MessageLog {
  readonly #deps: MessageLogDependencies;
  readonly #pager: KeysetPager;

  constructor(deps: MessageLogDependencies) {
    this.#deps = deps;
    this.#pager = new KeysetPager(deps.cursorSecret, MESSAGE_LOG_CURSOR);
  }

  /** One message of the company with its events, oldest first; NOT_FOUND when unknown, malformed or another company's. */
  async get(command: GetMessageCommand): Promise<MessageRecord> {
    const message = isUuid(command.id) ? await this.#deps.store.message(command.companyId, command.id) : undefined;
    if (!message) throw notFound();
    return message;
  }

  /** A page of the company's messages, newest first (created_at desc, id desc). */
  async list(command: ListMessagesCommand): Promise<Page<MessageRecord>> {
    const { companyId } = command;
    const { limit, filters } = parseListOptions(command);
    const fingerprint = filterFingerprint(fingerprintedFilters(filters));
    // An empty cursor is what a REST client sends for "?cursor=": the first page.
    const after = this.#pager.after(companyId, fingerprint, command.cursor);
    const rows = await this.#deps.store.page(companyId, filters, after, limit + 1);
    return this.#pager.page(companyId, fingerprint, rows, limit);
  }

  /** The content of one message of the company as sent; NOT_FOUND when unknown, malformed or another company's. */
  async content(command: GetMessageCommand): Promise<MessageContentRecord> {
    const content = isUuid(command.id) ? await this.#deps.contents.content(command.companyId, command.id) : undefined;
    if (!content) throw notFound();
    return content;
  }
}
