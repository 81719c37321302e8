import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A sign-up form of a company (GET /mail/v1/forms, the hosted form page).
 * `publicId` is unique over all companies: the hosted page is reached by it
 * without an API key. `fields` is the design (array of {name, label, type,
 * required, options}). Deactivated, never deleted. Written through
 * MikroORM (src/adapters/postgres/forms); table `signup_form`, DDL in
 * ../migrations/Migration20251123030000_forms.ts.
 */
export const SignupFormSchema = defineEntity({
  name: "SignupForm",
  tableName: "signup_form",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("signup_form_company_id_fkey"),
    publicId: p.text().check("public_id ~ '^[A-Za-z0-9_-]{8,64}$'").unique("signup_form_public_id_key"),
    name: p.text().check("char_length(name) >= 1 AND char_length(name) <= 200"),
    fields: p.json<unknown[]>().columnType("jsonb"),
    consentText: p.text(),
    /** +1 per change of the consent text: a sign-up's evidence names the version shown. */
    consentVersion: p.integer().default(1),
    doubleOptIn: p.boolean(),
    /** BCP 47. */
    language: p.text(),
    active: p.boolean().default(true),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [
    { properties: ["company", "createdAt", "id"], name: "signup_form_active_index", where: "active" },
  ],
});

export type SignupForm = InferEntity<typeof SignupFormSchema>;
