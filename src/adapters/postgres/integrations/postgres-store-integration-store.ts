/**
 * The StoreIntegrationStore port through MikroORM, each method on its own
 * EntityManager fork; every statement filters on the caller's companyId.
 *
 * Recording an order: `insert ... on conflict (integration_id,
 * store_order_id) do nothing`; PostgreSQL lets one concurrent push insert,
 * the others wait for it to commit, then lock its row (`for update`) and
 * apply their push to the stored order in turn. The order and its outbox
 * rows commit together.
 */
import { LockMode, raw } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { StoreIntegrationSchema, StoreOrderSchema, type StoreIntegration } from "../entities/index.ts";
import { insertOutboxEvents } from "../webhooks/outbox-events.ts";
import { isUuid } from "../ids.ts";
import type { StoreIntegrationStore } from "../../../capabilities/integrations/ports.ts";
import type { StoreIntegrationRecord, StoreOrder, StoreProvider } from "../../../capabilities/integrations/types.ts";

/** The columns of an integration the insert answers, so that a new one costs one statement. */
const INTEGRATION_FIELDS = ["id", "company", "provider", "siteUrl", "createdAt"] as const;

export function postgresStoreIntegrationStore(orm: MikroORM): StoreIntegrationStore {
  /** A fresh EntityManager per operation. */
  const fork = (): EntityManager => orm.em.fork();

  return {
    async connect(companyId, provider, siteUrl) {
      const em = fork();
      const site = { company: companyId, provider, siteUrl };
      // `on conflict do nothing` rather than em.upsert: whether this call created the integration is part of the answer.
      const inserted = await em
        .createQueryBuilder(StoreIntegrationSchema)
        .insert(site)
        .onConflict(["company", "provider", "siteUrl"])
        .ignore()
        .returning([...INTEGRATION_FIELDS])
        .execute("run");
      const created = inserted.rows?.[0];
      if (created) return { integration: integrationRecord(em.map(StoreIntegrationSchema, created)), created: true };
      const existing = await em.findOne(StoreIntegrationSchema, site);
      if (!existing) throw new Error("store integration vanished after a conflicting insert");
      return { integration: integrationRecord(existing), created: false };
    },

    async find(companyId, id) {
      if (!isUuid(companyId) || !isUuid(id)) return undefined;
      const integration = await fork().findOne(StoreIntegrationSchema, { id, company: companyId });
      return integration ? integrationRecord(integration) : undefined;
    },

    async recordOrder({ companyId, integrationId, order, contactId, decide, events }) {
      return fork().transactional(async (em) => {
        const first = decide(undefined);
        const inserted = await em
          .createQueryBuilder(StoreOrderSchema)
          .insert({
            company: companyId,
            integration: integrationId,
            storeOrderId: order.id,
            status: order.status,
            paid: first.paid,
            payload: orderPayload(order),
            contact: contactId,
          })
          .onConflict(["integration", "storeOrderId"])
          .ignore()
          .returning(["id"])
          .execute("run");
        const newId = inserted.rows?.[0]?.id;
        if (typeof newId === "string") {
          await insertOutboxEvents(em, companyId, events(first, newId, 1));
          return first;
        }
        const stored = await em.findOne(
          StoreOrderSchema,
          { company: companyId, integration: integrationId, storeOrderId: order.id },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!stored) throw new Error("store order vanished after a conflicting insert");
        const decision = decide(storedOrder(stored.payload));
        if (!decision.changed) return decision;
        const version = stored.version + 1;
        // A native update rather than a flush: the unit of work's UPDATE would name the id alone, not the company.
        await em.nativeUpdate(
          StoreOrderSchema,
          { company: companyId, id: stored.id },
          {
            status: order.status,
            paid: decision.paid,
            payload: orderPayload(order),
            // No contact this time keeps the one stored.
            ...(contactId !== null ? { contact: contactId } : {}),
            version,
            updatedAt: raw("now()"),
          },
        );
        await insertOutboxEvents(em, companyId, events(decision, stored.id, version));
        return decision;
      });
    },
  };
}


function integrationRecord(integration: StoreIntegration): StoreIntegrationRecord {
  return {
    id: integration.id,
    companyId: integration.company.id,
    // The table's check constraint admits only the store providers.
    provider: integration.provider as StoreProvider,
    siteUrl: integration.siteUrl,
    createdAt: integration.createdAt,
  };
}

/** The order as the jsonb payload stores it. */
function orderPayload(order: StoreOrder): Record<string, unknown> {
  return { ...order };
}

/** The stored payload is an order this store wrote (orderPayload). */
function storedOrder(payload: Record<string, unknown>): StoreOrder {
  return payload as unknown as StoreOrder;
}
