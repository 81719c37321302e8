import type { MikroORM } from "@mikro-orm/postgresql";
import { poolOf } from "../sql.ts";
import { PostgresWebhookDeliveryStore } from "./postgres-webhook-delivery-store.ts";
import { PostgresWebhookEndpointStore } from "./postgres-webhook-endpoint-store.ts";
import { PostgresWebhookOutbox } from "./postgres-webhook-outbox.ts";
import { PostgresPublishedEventRecorder, PostgresTestEventRecorder } from "./postgres-published-events.ts";

export { PostgresPublishedEventRecorder, PostgresTestEventRecorder, PostgresWebhookDeliveryStore, PostgresWebhookEndpointStore, PostgresWebhookOutbox };

/** The webhooks capability's PostgreSQL adapters on one ORM (endpoints through MikroORM, the rest in plain SQL). */
export interface PostgresWebhookStores {
  readonly endpointStore: PostgresWebhookEndpointStore;
  readonly deliveryStore: PostgresWebhookDeliveryStore;
  readonly outbox: PostgresWebhookOutbox;
  readonly publishedEvents: PostgresPublishedEventRecorder;
  readonly testEvents: PostgresTestEventRecorder;
}

export function postgresWebhookStores(orm: MikroORM, db = poolOf(orm)): PostgresWebhookStores {
  return {
    endpointStore: new PostgresWebhookEndpointStore(orm),
    deliveryStore: new PostgresWebhookDeliveryStore(db),
    outbox: new PostgresWebhookOutbox(db),
    publishedEvents: new PostgresPublishedEventRecorder(db),
    testEvents: new PostgresTestEventRecorder(db),
  };
}
