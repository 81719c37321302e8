import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * One click on a tracked campaign link (a `campaign.click` event), kept for
 * attributing conversions: unique per (company, clickId); `suspect` clicks
 * (automated) are kept but never credited. Written and read through
 * MikroORM (src/adapters/postgres/conversions/postgres-click-ledger.ts). Table `campaign_click`; the DDL is in
 * ../migrations/Migration20251123020000_conversions.ts.
 */
export const CampaignClickSchema = defineEntity({
  name: "CampaignClick",
  tableName: "campaign_click",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("campaign_click_company_id_fkey"),
    clickId: p.text(),
    campaignId: p.text(),
    linkId: p.text(),
    recipientId: p.text().nullable(),
    // No foreign key: the ledger keeps what the event said.
    contactId: p.uuid().nullable(),
    /** The contacts' matching key of the address. */
    email: p.text().nullable(),
    suspect: p.boolean().default(false),
    occurredAt: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  checks: [{ name: "campaign_click_who", expression: "contact_id IS NOT NULL OR email IS NOT NULL" }],
  uniques: [{ properties: ["company", "clickId"], name: "campaign_click_id_index" }],
  // Raw DDL (as pg_indexes shows it): MikroORM 7.2 introspection loses DESC
  // in a structured index (see message.ts); raw indexes compare by name.
  indexes: [
    {
      name: "campaign_click_contact_index",
      expression:
        "CREATE INDEX campaign_click_contact_index ON public.campaign_click USING btree (company_id, contact_id, occurred_at DESC) WHERE ((contact_id IS NOT NULL) AND (NOT suspect))",
    },
    {
      name: "campaign_click_email_index",
      expression:
        "CREATE INDEX campaign_click_email_index ON public.campaign_click USING btree (company_id, email, occurred_at DESC) WHERE ((email IS NOT NULL) AND (NOT suspect))",
    },
  ],
});

export type CampaignClick = InferEntity<typeof CampaignClickSchema>;
