import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { ContactSchema } from "./contact.ts";
import { StoreIntegrationSchema } from "./store-integration.ts";

/**
 * An order pushed by a connected shop, one per (integration, store order
 * id); `payload` is the order as last pushed, `version` +1 per change.
 * Written through MikroORM with its `order.*` outbox rows in one transaction
 * (src/adapters/postgres/integrations); table `store_order`, DDL in
 * ../migrations/Migration20251123040000_integrations.ts.
 */
export const StoreOrderSchema = defineEntity({
  name: "StoreOrder",
  tableName: "store_order",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("store_order_company_id_fkey"),
    integration: () =>
      p
        .manyToOne(StoreIntegrationSchema)
        .fieldName("integration_id")
        .deleteRule("cascade")
        .foreignKeyName("store_order_integration_id_fkey"),
    storeOrderId: p.text(),
    status: p.text(),
    paid: p.boolean(),
    payload: p.json<Record<string, unknown>>().columnType("jsonb"),
    contact: () =>
      p.manyToOne(ContactSchema).nullable().fieldName("contact_id").deleteRule("set null").foreignKeyName("store_order_contact_id_fkey"),
    version: p.integer().default(1),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  uniques: [{ properties: ["integration", "storeOrderId"], name: "store_order_index" }],
  indexes: [{ properties: ["company", "createdAt", "id"], name: "store_order_company_index" }],
});

export type StoreOrder = InferEntity<typeof StoreOrderSchema>;
