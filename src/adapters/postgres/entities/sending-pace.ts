import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The token bucket of one provider's sending pace, shared by every worker
 * process. Rows are read and refilled by raw SQL under a row lock; the
 * entity exists so the ORM metadata describes the whole schema.
 */
export const SendingPaceSchema = defineEntity({
  name: "SendingPace",
  tableName: "sending_pace",
  properties: {
    provider: p.text().primary(),
    // Same DoubleType as p.double(), which the ORM reads as a number here,
    // but typed `number` rather than p.double()`s `number | string`.
    tokens: p.type("double precision"),
    updatedAt: p.datetime(),
  },
});

export type SendingPace = InferEntity<typeof SendingPaceSchema>;
