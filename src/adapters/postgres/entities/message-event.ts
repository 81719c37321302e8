import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { MessageSchema } from "./message.ts";

/**
 * One entry of a message's history: a lifecycle move of ours (`sent`,
 * `failed`, ...; at most one of each type per message) or an event reported
 * by the provider (deduplicated by `providerEventId`). Written by raw SQL
 * with the move it records (src/adapters/postgres/messages/message-store.ts).
 * Table `message_event`.
 */
export const MessageEventSchema = defineEntity({
  name: "MessageEvent",
  tableName: "message_event",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    message: () =>
      p.manyToOne(MessageSchema).fieldName("message_id").deleteRule("cascade").foreignKeyName("message_event_message_id_fkey"),
    // Copied from the message for tenant-scoped reads; no foreign key, the
    // message's own cascade already removes the rows with the company.
    companyId: p.uuid(),
    type: p.text(),
    at: p.datetime(),
    providerEventId: p.text().nullable(),
    detail: p.text().nullable(),
  },
  uniques: [
    { properties: "providerEventId", name: "message_event_provider_event_index", where: "provider_event_id IS NOT NULL" },
    // A retried activity cannot record the same lifecycle event twice.
    { properties: ["message", "type"], name: "message_event_once_index", where: "provider_event_id IS NULL" },
  ],
  indexes: [{ properties: ["message", "at", "id"], name: "message_event_message_index" }],
});

export type MessageEvent = InferEntity<typeof MessageEventSchema>;
