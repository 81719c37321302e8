import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CREDENTIALS_CHANNEL } from "./notify-channels.ts";
import { notifyTrigger } from "./notify-trigger.ts";

/**
 * A customer company: the tenant. Everything else a company owns carries its
 * id, and repositories filter on it (the rule: ../accounts/api-key-repository.ts).
 * Table `company`; the DDL is in ../migrations (the ORM never syncs schema).
 */
export const CompanySchema = defineEntity({
  name: "Company",
  tableName: "company",
  properties: {
    // Generated here rather than by the database so the entity has its id
    // before the flush (the column also defaults to gen_random_uuid()).
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    name: p.text().check("char_length(name) >= 1 AND char_length(name) <= 200"),
    entitlementApi: p.boolean().default(true),
    entitlementSmtp: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  // Tells the API processes' key lookup caches that a company changed (Migration20251125200000_credential_change_notices).
  triggers: [
    notifyTrigger({
      table: "company",
      name: "company_credentials_changed",
      channel: CREDENTIALS_CHANNEL,
      events: ["update", "delete"],
      updateOf: ["name", "entitlement_api", "entitlement_smtp"],
    }),
  ],
});

export type Company = InferEntity<typeof CompanySchema>;
