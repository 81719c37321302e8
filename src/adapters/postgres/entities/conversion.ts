import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { ContactSchema } from "./contact.ts";

/**
 * A conversion recorded through POST /mail/v1/conversions, one per
 * (company, eventId), with its attribution (the contact's last verified
 * campaign click) and its refunds. Written through MikroORM
 * (src/adapters/postgres/conversions/postgres-conversion-store.ts: each
 * change with its `conversion.recorded` outbox row in one transaction). Amounts are exact
 * decimals, read and written as text. Table `conversion`; the DDL is in
 * ../migrations/Migration20251123020000_conversions.ts.
 */
export const ConversionSchema = defineEntity({
  name: "Conversion",
  tableName: "conversion",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("conversion_company_id_fkey"),
    eventId: p.text(),
    eventType: p.text().check("event_type IN ('purchase', 'order_confirmed', 'registration', 'lead', 'booking')"),
    contact: () =>
      p.manyToOne(ContactSchema).nullable().fieldName("contact_id").deleteRule("set null").foreignKeyName("conversion_contact_id_fkey"),
    /** The contacts' matching key of the address, when known. */
    email: p.text().nullable(),
    customerRef: p.text().nullable(),
    revenue: p.decimal("string").precision(15).scale(4).check("revenue >= 0"),
    currency: p.text().check("currency ~ '^[A-Z]{3}$'"),
    status: p.text().check("status IN ('completed', 'refunded', 'cancelled')"),
    refundedAmount: p.decimal("string").precision(15).scale(4).defaultRaw("0").check("refunded_amount >= 0"),
    occurredAt: p.datetime(),
    metadata: p.json<Record<string, unknown>>().columnType("jsonb").defaultRaw("'{}'"),
    /** Attribution: the last verified click before occurredAt; null when none. */
    campaignId: p.text().nullable(),
    linkId: p.text().nullable(),
    clickedAt: p.datetime().nullable(),
    /** 1 when recorded, +1 per adjustment: names each change's outbox row. */
    version: p.integer().default(1),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  checks: [{ name: "conversion_refund_within_revenue", expression: "refunded_amount <= revenue" }],
  uniques: [{ properties: ["company", "eventId"], name: "conversion_event_index" }],
  indexes: [
    { properties: ["company", "campaignId"], name: "conversion_campaign_index", where: "campaign_id IS NOT NULL" },
    // A contact's conversions (by its address, which a conversion of a known contact always carries), newest recorded first.
    {
      name: "conversion_email_index",
      expression: "CREATE INDEX conversion_email_index ON public.conversion USING btree (company_id, email, created_at DESC, id DESC) WHERE (email IS NOT NULL)",
    },
  ],
});

export type Conversion = InferEntity<typeof ConversionSchema>;
