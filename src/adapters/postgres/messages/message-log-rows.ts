import { toDate } from "../sql.ts";
import type { EventRow, MessageRow } from "./message-log-queries.ts";
import type { MessageEventRecord, MessageRecord } from "../../../capabilities/messages/read/types.ts";

/** Tags are written as string-to-string; anything else in the column is left out rather than passed on untyped. */
function tagsOf(value: unknown): Record<string, string> {
  const parsed: unknown = typeof value === "string" ? JSON.parse(value) : value;
  const tags: Record<string, string> = {};
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return tags;
  for (const [key, tag] of Object.entries(parsed)) {
    if (typeof tag === "string") tags[key] = tag;
  }
  return tags;
}

export function messageRecord(row: MessageRow, events: MessageEventRecord[]): MessageRecord {
  return {
    id: row.id,
    recipient: row.recipient,
    subject: row.subject,
    templateId: row.template_id,
    status: row.status,
    providerMessageId: row.provider_message_id,
    errorCode: row.error_code,
    createdAt: toDate(row.created_at),
    sentAt: toDate(row.sent_at),
    lastEventAt: toDate(row.last_event_at),
    events,
    tags: tagsOf(row.tags),
  };
}

/** Events by message id, each list in the order of the rows (the query sorts them oldest first). */
export function eventsByMessage(rows: readonly EventRow[]): Map<string, MessageEventRecord[]> {
  const byMessage = new Map<string, MessageEventRecord[]>();
  for (const row of rows) {
    let events = byMessage.get(row.message_id);
    if (!events) byMessage.set(row.message_id, (events = []));
    events.push({ type: row.type, at: toDate(row.at) });
  }
  return byMessage;
}
