import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * One fixed one-minute window of a rate-limit bucket. Rows are written by
 * raw SQL only (the atomic upsert of PostgresRateLimitWindows); the entity exists
 * so the ORM metadata describes the whole schema.
 *
 * The table is UNLOGGED (no WAL for a row that changes on every request;
 * after a crash it comes back empty, which only resets the current windows).
 * MikroORM has no option for that, so a database built from the entities
 * alone would log it; its schema diff does not read a table's persistence,
 * and test/adapters/postgres/schema.test.ts lists this as the one difference.
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
