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

/** Query of the message log, as the caller wrote it (validated by the reader). */
export interface ListMessagesOptions {
  /** 1 to 100, default 25. */
  readonly limit?: number | undefined;
  /** The `nextCursor` of the previous page, unchanged. */
  readonly cursor?: string | undefined;
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

export interface MessagePage {
  readonly items: MessageRecord[];
  /** Opaque; null when there are no more pages. */
  readonly nextCursor: string | null;
}
