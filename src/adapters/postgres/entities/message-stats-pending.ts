import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * An outcome of a message not yet added to the statistics
 * (message_stats_hour): the statement that records an acceptance or a move
 * writes one row here, in the same transaction, and the fold
 * (../stats/stats-fold.ts) moves the rows into the hourly aggregates in
 * batches. One narrow insert on the send path instead of an upsert per
 * aggregate row; nothing is lost, because the fold deletes the rows in the
 * transaction that counts them.
 *
 * No foreign keys: a check per insert is what this table saves the send
 * path. The fold joins the message (for its tags and template), so a row
 * whose message is gone counts nothing. Written and read by raw SQL only;
 * the entity describes the schema.
 */
export const MessageStatsPendingSchema = defineEntity({
  name: "MessageStatsPending",
  tableName: "message_stats_pending",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    companyId: p.uuid(),
    messageId: p.uuid(),
    /** One of STATS_OUTCOMES (src/capabilities/stats/ports.ts). */
    outcome: p.text(),
    /** When it happened: the hour it counts in. */
    at: p.datetime(),
  },
});

export type MessageStatsPending = InferEntity<typeof MessageStatsPendingSchema>;
