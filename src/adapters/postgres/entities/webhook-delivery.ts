import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { WebhookEndpointSchema } from "./webhook-endpoint.ts";
import { WebhookEventSchema } from "./webhook-event.ts";
import { WEBHOOK_WORK_CHANNEL } from "./notify-channels.ts";
import { notifyTrigger } from "./notify-trigger.ts";

/**
 * One event to deliver to one endpoint, and where its delivery stands
 * (states in src/capabilities/webhooks/delivery-states.ts). Created by the
 * fan-out of the webhook_event outbox, unique per (event, endpoint); its
 * workflow (`webhook-delivery-<id>`) makes the attempts. Written by raw SQL
 * (src/adapters/postgres/webhooks); the entity describes the schema. Table
 * `webhook_delivery`; the DDL is in
 * ../migrations/Migration20251123000000_webhooks.ts.
 */
export const WebhookDeliverySchema = defineEntity({
  name: "WebhookDelivery",
  tableName: "webhook_delivery",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("webhook_delivery_company_id_fkey"),
    endpoint: () =>
      p
        .manyToOne(WebhookEndpointSchema)
        .fieldName("endpoint_id")
        .deleteRule("cascade")
        .foreignKeyName("webhook_delivery_endpoint_id_fkey"),
    webhookEvent: () =>
      p.manyToOne(WebhookEventSchema).fieldName("event_id").deleteRule("cascade").foreignKeyName("webhook_delivery_event_id_fkey"),
    /** The event's name, copied for the list's filter. */
    event: p.text(),
    occurredAt: p.datetime(),
    state: p
      .text()
      .default("pending")
      .check("state IN ('pending', 'attempting', 'succeeded', 'dead_letter')"),
    attemptCount: p.integer().default(0),
    lastStatus: p.integer().nullable(),
    lastError: p.text().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    nextAttemptAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    /** Outbox marker: null until the delivery's workflow is known to exist. */
    workflowStartedAt: p.datetime().nullable(),
    /** Set by a manual retry until the workflow has been told. */
    retryRequestedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ["webhookEvent", "endpoint"], name: "webhook_delivery_event_id_endpoint_id_key" }],
  // Raw DDL (as pg_indexes shows it) for the keyset indexes: MikroORM 7.2
  // introspection loses their DESC (see message.ts); raw indexes compare by name.
  indexes: [
    {
      name: "webhook_delivery_list_index",
      expression: "CREATE INDEX webhook_delivery_list_index ON public.webhook_delivery USING btree (company_id, created_at DESC, id DESC)",
    },
    {
      name: "webhook_delivery_endpoint_index",
      expression:
        "CREATE INDEX webhook_delivery_endpoint_index ON public.webhook_delivery USING btree (company_id, endpoint_id, created_at DESC, id DESC)",
    },
    { properties: ["endpoint", "createdAt"], name: "webhook_delivery_dead_letter_index", where: "state = 'dead_letter'" },
    { properties: "createdAt", name: "webhook_delivery_unstarted_index", where: "workflow_started_at IS NULL" },
    { properties: "retryRequestedAt", name: "webhook_delivery_retry_index", where: "retry_requested_at IS NOT NULL" },
  ],
  // Wakes the webhook outbox relay on a manual retry (Migration20251201000000_webhook_work_notices).
  triggers: [
    notifyTrigger({
      table: "webhook_delivery",
      name: "webhook_delivery_retry_notice",
      channel: WEBHOOK_WORK_CHANNEL,
      events: ["update"],
      forEach: "row",
      updateOf: ["retry_requested_at"],
      when: "new.retry_requested_at is not null",
    }),
  ],
});

export type WebhookDelivery = InferEntity<typeof WebhookDeliverySchema>;
