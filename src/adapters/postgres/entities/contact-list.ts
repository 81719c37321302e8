import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A contact list of a company (ListsService). Names are unique per company
 * whatever their case. Table `contact_list`; the DDL is in
 * ../migrations/Migration20251123010000_contacts.ts.
 */
export const ContactListSchema = defineEntity({
  name: "ContactList",
  tableName: "contact_list",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("contact_list_company_id_fkey"),
    name: p.text().check("char_length(name) >= 1 AND char_length(name) <= 100"),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [
    // Raw DDL as pg_indexes shows it: an index on an expression (compared by name).
    {
      name: "contact_list_name_index",
      expression: "CREATE UNIQUE INDEX contact_list_name_index ON public.contact_list USING btree (company_id, lower(name))",
    },
    { properties: ["company", "createdAt", "id"], name: "contact_list_company_index" },
  ],
});

export type ContactList = InferEntity<typeof ContactListSchema>;
