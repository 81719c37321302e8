import type { PageRequest } from "../../shared/paging.ts";
import type { MessageStatusName } from "../statuses.ts";

export type { MessageStatusName };
export { isMessageStatus, MESSAGE_STATUSES } from "../statuses.ts";

/** A delivery event of a message. */
export interface MessageEventRecord {
  readonly type: string;
  readonly at: Date;
}

/** A message of the message log as the read calls hand it out (never a row or an entity). */
export interface MessageRecord {
  readonly id: string;
  readonly recipient: string;
  readonly subject: string;
  readonly templateId: string | null;
  /** Normally a `MessageStatusName`; kept as the stored text so an unknown value is not hidden. */
  readonly status: string;
  readonly providerMessageId: string | null;
  readonly errorCode: string | null;
  readonly createdAt: Date;
  readonly sentAt: Date | null;
  readonly lastEventAt: Date | null;
  /** Oldest first. */
  readonly events: MessageEventRecord[];
  readonly tags: Readonly<Record<string, string>>;
}

/** The content of a message as it was sent (the administration screen shows it). */
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

/** One message of a company, by id (any text: a malformed id is not found). */
export interface GetMessageCommand {
  readonly companyId: string;
  readonly id: string;
}

/** A page of a company's message log, with its filters as the caller wrote them (validated by the log). */
export interface ListMessagesCommand extends PageRequest {
  readonly companyId: string;
  /** A message status (`queued`, `sent`, ...). */
  readonly status?: string | undefined;
  /** Part of the recipient or subject, case-insensitive. */
  readonly q?: string | undefined;
  /** Only messages created at or after this instant. */
  readonly since?: Date | undefined;
  /** Only messages whose tags have this key. */
  readonly tag?: string | undefined;
  /** Only messages to this address (whole, case-insensitive). */
  readonly recipient?: string | undefined;
}
