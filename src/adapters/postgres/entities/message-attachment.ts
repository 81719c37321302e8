import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { MessageSchema } from "./message.ts";

/**
 * One file sent with a message (POST /mail/v1/send `attachments`), kept
 * apart from the message row so that the message log's reads and moves
 * never carry its bytes: the handoff reads them, the message page lists
 * them (without `content`) and a member downloads one. Deleted with the
 * message's content when MESSAGE_CONTENT_RETENTION_DAYS have passed
 * (src/adapters/postgres/messages/content-retention.ts), and with the
 * message. Written by raw SQL with the message
 * (src/adapters/postgres/messages/message-store.ts). Table `message_attachment`.
 */
export const MessageAttachmentSchema = defineEntity({
  name: "MessageAttachment",
  tableName: "message_attachment",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    message: () =>
      p.manyToOne(MessageSchema).fieldName("message_id").deleteRule("cascade").foreignKeyName("message_attachment_message_id_fkey"),
    // Copied from the message for tenant-scoped reads; the message's own cascade removes the rows with the company.
    companyId: p.uuid(),
    /** Its place among the message's files, from 0, as sent. */
    position: p.smallint(),
    filename: p.text(),
    contentType: p.text(),
    /** An inline image's Content-ID; null for an ordinary attachment. */
    contentId: p.text().nullable(),
    /** Bytes of `content`, kept so that lists need not read it. */
    size: p.integer(),
    content: p.blob(),
  },
  uniques: [{ properties: ["message", "position"], name: "message_attachment_position_key" }],
});

export type MessageAttachment = InferEntity<typeof MessageAttachmentSchema>;
