import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A company's messages counted by outcome in one UTC hour: its sending
 * statistics (src/capabilities/stats). Written by raw SQL only, in the
 * statement that records each acceptance and status move
 * (../messages/message-stats.ts); the entity exists so the ORM metadata
 * describes the schema.
 *
 * `dimension` says what a row counts: 0 all the company's messages
 * (`dimension_value` empty), 1 those carrying the tag key `dimension_value`,
 * 2 those of the template `dimension_value`. `shard` (0 to 7, from the
 * message id) splits one hour's row in eight, so concurrent sends of one
 * company do not queue on one row lock; reads add the shards up.
 */
export const MessageStatsHourSchema = defineEntity({
  name: "MessageStatsHour",
  tableName: "message_stats_hour",
  properties: {
    company: () =>
      p
        .manyToOne(CompanySchema)
        .primary()
        .fieldName("company_id")
        .deleteRule("cascade")
        .updateRule("no action")
        .foreignKeyName("message_stats_hour_company_id_fkey"),
    dimension: p.smallint().primary(),
    dimensionValue: p.text().primary(),
    hour: p.datetime().primary(),
    shard: p.smallint().primary(),
    accepted: p.integer().default(0),
    sent: p.integer().default(0),
    delivered: p.integer().default(0),
    bounced: p.integer().default(0),
    complained: p.integer().default(0),
    rejected: p.integer().default(0),
    failed: p.integer().default(0),
    suppressed: p.integer().default(0),
    deferred: p.integer().default(0),
  },
});

export type MessageStatsHour = InferEntity<typeof MessageStatsHourSchema>;
