import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A shop connected through the WordPress / WooCommerce plugin
 * (IntegrationsService), one per (company, provider, site URL). Written through
 * MikroORM (src/adapters/postgres/integrations); table `store_integration`, DDL
 * in ../migrations/Migration20251123040000_integrations.ts.
 */
export const StoreIntegrationSchema = defineEntity({
  name: "StoreIntegration",
  tableName: "store_integration",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("store_integration_company_id_fkey"),
    provider: p.text().check("provider IN ('woocommerce')"),
    /** Normalised (lower-case scheme and host, no trailing slash). */
    siteUrl: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  uniques: [{ properties: ["company", "provider", "siteUrl"], name: "store_integration_site_index" }],
});

export type StoreIntegration = InferEntity<typeof StoreIntegrationSchema>;
