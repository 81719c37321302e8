import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity, type TriggerDef } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { LIVE_EVENTS_CHANNEL, WEBHOOK_WORK_CHANNEL } from "./notify-channels.ts";
import { notifyTrigger } from "./notify-trigger.ts";

/** Ids per notice: a NOTIFY payload holds at most 8000 bytes (an id is 37 with its space). */
const IDS_PER_NOTICE = 100;

/**
 * The live feed's notice (../webhooks/live-event-feed.ts): one per company
 * and 100 events the statement inserted, once per statement (a batch is a
 * handful of notices, not one per row), with the inserted rows only (ON
 * CONFLICT DO NOTHING leaves the others out).
 * Raw DDL: MikroORM's structured triggers have no transition tables.
 */
export const LIVE_EVENT_NOTICE_TRIGGER: TriggerDef = {
  name: "webhook_event_live_notice",
  timing: "after",
  events: ["insert"],
  forEach: "statement",
  expression: [
    `create or replace function webhook_event_webhook_event_live_notice_fn() returns trigger language plpgsql as $$ begin`,
    ` perform pg_notify('${LIVE_EVENTS_CHANNEL}', n.company_id::text || ' ' || string_agg(n.id::text, ' '))`,
    `   from (select company_id, id, (row_number() over (partition by company_id) - 1) / ${IDS_PER_NOTICE} as chunk from inserted_events) n`,
    `  group by n.company_id, n.chunk;`,
    ` return null; end; $$;`,
    `create trigger webhook_event_live_notice after insert on webhook_event referencing new table as inserted_events`,
    ` for each statement execute function webhook_event_webhook_event_live_notice_fn();`,
  ].join("\n"),
};

/**
 * An event waiting for webhook delivery: the outbox, written in the same
 * transaction as the change it reports. `dedupeKey` (e.g.
 * `message:<id>:sent`) makes recording idempotent. Table `webhook_event`.
 */
export const WebhookEventSchema = defineEntity({
  name: "WebhookEvent",
  tableName: "webhook_event",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("webhook_event_company_id_fkey"),
    event: p.text(),
    occurredAt: p.datetime(),
    data: p.json<Record<string, unknown>>().columnType("jsonb"),
    dedupeKey: p.text().unique("webhook_event_dedupe_key_key"),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    /** Outbox marker: null until the event's webhook deliveries exist (Migration20251123000000_webhooks). */
    fannedOutAt: p.datetime().nullable(),
  },
  indexes: [
    { properties: ["company", "createdAt"], name: "webhook_event_company_index" },
    // The fan-out relay finds events whose deliveries were not made yet.
    { properties: "createdAt", name: "webhook_event_unfanned_index", where: "fanned_out_at IS NULL" },
    // The webhook deliveries a message caused (Migration20251128000000_webhook_bounds); raw DDL as pg_indexes shows it.
    {
      name: "webhook_event_message_index",
      expression:
        "CREATE INDEX webhook_event_message_index ON public.webhook_event USING btree (company_id, ((data ->> 'messageId'::text))) WHERE (data ? 'messageId'::text)",
    },
  ],
  // Wakes the webhook outbox relay (Migration20251201000000_webhook_work_notices); tells the live
  // event streams which events were committed (../webhooks/live-event-feed.ts).
  triggers: [
    notifyTrigger({ table: "webhook_event", name: "webhook_event_work_notice", channel: WEBHOOK_WORK_CHANNEL, events: ["insert"] }),
    LIVE_EVENT_NOTICE_TRIGGER,
  ],
});

export type WebhookEvent = InferEntity<typeof WebhookEventSchema>;
