import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { WebhookDeliverySchema } from "./webhook-delivery.ts";

/**
 * One HTTP attempt of a webhook delivery: when, how long, and the status the
 * receiver answered or why there was none. Never the response body (spec,
 * Delivery rules 6). Written by raw SQL with the delivery's update, in one
 * transaction. Table `webhook_attempt`; the DDL is in
 * ../migrations/Migration20251123000000_webhooks.ts.
 */
export const WebhookAttemptSchema = defineEntity({
  name: "WebhookAttempt",
  tableName: "webhook_attempt",
  properties: {
    delivery: () =>
      p
        .manyToOne(WebhookDeliverySchema)
        .primary()
        .fieldName("delivery_id")
        .deleteRule("cascade")
        .foreignKeyName("webhook_attempt_delivery_id_fkey"),
    /** Attempt number, from 1 (the attempt header). */
    number: p.integer().primary().check("number >= 1"),
    // Copied from the delivery for tenant-scoped reads; no foreign key.
    companyId: p.uuid(),
    attemptedAt: p.datetime(),
    durationMs: p.integer(),
    status: p.integer().nullable(),
    errorClass: p.text().nullable(),
  },
  // An endpoint's health over the last 24 hours (Migration20251128000000_webhook_bounds).
  indexes: [{ properties: ["companyId", "attemptedAt"], name: "webhook_attempt_recent_index" }],
});

export type WebhookAttempt = InferEntity<typeof WebhookAttemptSchema>;
