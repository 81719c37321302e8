import { ApiError } from "../../../contract/api-error.ts";
import type { MessageContentLog } from "../ports.ts";

/** The content of a message as it was sent (GetMessageContent; read by the administration screen). */
export interface MessageContentRecord {
  readonly id: string;
  /** The HTML body as sent (sanitised at acceptance); null for a text-only message. */
  readonly html: string | null;
  /** The plain-text version as sent; null when none was sent. */
  readonly text: string | null;
  readonly fromEmail: string;
  readonly fromName: string | null;
  readonly replyTo: string | null;
  /** The service's own mail: its content carries one-time links and is never shown (html and text null). */
  readonly withheld: boolean;
}

export interface MessageContentReader {
  /** The content of one message of the company; NOT_FOUND when unknown, malformed or another company's. */
  getMessageContent(companyId: string, id: string): Promise<MessageContentRecord>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createMessageContentReader(log: MessageContentLog): MessageContentReader {
  return {
    async getMessageContent(companyId, id) {
      // Like GetMessage: a malformed id answers like an unknown one.
      const content = UUID.test(id) ? await log.content(companyId, id) : undefined;
      if (!content) throw new ApiError("NOT_FOUND", "message not found");
      return content;
    },
  };
}
