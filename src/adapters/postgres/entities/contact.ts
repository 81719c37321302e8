import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A contact of a company, one per normalised address (`emailNormalized`:
 * lower-cased, internationalised domain in A-label form). Written by raw SQL
 * (src/adapters/postgres/contacts/postgres-contact-store.ts: the write, its
 * memberships and its `contact.updated` outbox row in one transaction); the
 * entity exists so the ORM metadata describes the schema. Table `contact`;
 * the DDL is in ../migrations/Migration20251123010000_contacts.ts.
 */
export const ContactSchema = defineEntity({
  name: "Contact",
  tableName: "contact",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("contact_company_id_fkey"),
    email: p.text(),
    emailNormalized: p.text(),
    firstName: p.text().nullable(),
    lastName: p.text().nullable(),
    // `company` is the tenant relation; the contact's employer is company_name.
    companyName: p.text().nullable(),
    phone: p.text().nullable(),
    locale: p.text().nullable(),
    attributes: p.json<Record<string, string | number | boolean | null>>().columnType("jsonb").defaultRaw("'{}'"),
    tags: p.array().columnType("text[]").defaultRaw("'{}'"),
    status: p
      .text()
      .check("status IN ('subscribed', 'pending', 'unsubscribed', 'suppressed', 'bounced', 'complained')"),
    consentSource: p.text().nullable(),
    consentAt: p.datetime().nullable(),
    consentReference: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  // A unique index, as the migration built it, not a unique constraint: MikroORM
  // makes every non-partial `unique` a constraint and has no structured way
  // to ask for an index. Raw DDL as pg_indexes shows it (compared by name).
  uniques: [
    {
      name: "contact_email_index",
      expression: "CREATE UNIQUE INDEX contact_email_index ON public.contact USING btree (company_id, email_normalized)",
    },
  ],
  // Raw DDL (as pg_indexes shows it) where the ORM cannot describe the index;
  // raw indexes are compared by name only (see message.ts for why the keyset
  // indexes are raw too).
  indexes: [
    {
      name: "contact_list_index",
      expression: "CREATE INDEX contact_list_index ON public.contact USING btree (company_id, created_at DESC, id DESC)",
    },
    {
      name: "contact_status_index",
      expression: "CREATE INDEX contact_status_index ON public.contact USING btree (company_id, status, created_at DESC, id DESC)",
    },
    { properties: "tags", name: "contact_tags_index", type: "gin" },
    // Sign-ups per form: the contacts whose consent a hosted form recorded (source `form:<publicId>`), by time.
    { properties: ["company", "consentSource", "consentAt"], name: "contact_form_consent_index", where: "consent_source ~~ 'form:%'::text" },
    {
      name: "contact_search_index",
      expression:
        "CREATE INDEX contact_search_index ON public.contact USING gin ((((((email_normalized || ' '::text) || COALESCE(first_name, ''::text)) || ' '::text) || COALESCE(last_name, ''::text))) gin_trgm_ops)",
    },
  ],
});

export type Contact = InferEntity<typeof ContactSchema>;
