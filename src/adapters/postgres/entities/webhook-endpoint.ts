import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A company's webhook endpoint: an https:// URL (checked against the target
 * policy on save and before every delivery), the events it subscribed to,
 * and its signing secret sealed with AES-256-GCM
 * (src/capabilities/sending-setup/key-sealing.ts), bound to the endpoint.
 * For 24 hours after a rotation the previous secret signs too
 * (`previousSecretSealed` until `previousSecretExpiresAt`). Table
 * `webhook_endpoint`; the DDL is in
 * ../migrations/Migration20251123000000_webhooks.ts.
 */
export const WebhookEndpointSchema = defineEntity({
  name: "WebhookEndpoint",
  tableName: "webhook_endpoint",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("webhook_endpoint_company_id_fkey"),
    url: p.text(),
    description: p.text().nullable(),
    events: p.array().columnType("text[]"),
    enabled: p.boolean().default(true),
    secretSealed: p.text(),
    previousSecretSealed: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [{ properties: ["company", "createdAt"], name: "webhook_endpoint_company_index" }],
});

export type WebhookEndpoint = InferEntity<typeof WebhookEndpointSchema>;
