import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * One fixed one-minute window of a rate-limit bucket. Rows are written by
 * raw SQL only (the atomic upsert of PostgresRateLimitWindows); the entity exists
 * so the ORM metadata describes the whole schema.
 */
export const RateLimitWindowSchema = defineEntity({
  name: "RateLimitWindow",
  tableName: "rate_limit",
  properties: {
    bucket: p.text().primary(),
    windowStart: p.datetime().primary(),
    count: p.integer(),
  },
  indexes: [{ properties: "windowStart", name: "rate_limit_window_start_index" }],
});

export type RateLimitWindow = InferEntity<typeof RateLimitWindowSchema>;
