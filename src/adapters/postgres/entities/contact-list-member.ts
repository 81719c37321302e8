import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { ContactSchema } from "./contact.ts";
import { ContactListSchema } from "./contact-list.ts";

/**
 * A contact's membership of a list, set by the contact write (`listIds`
 * replaces the memberships when sent). Keyed by (company_id, list_id,
 * contact_id) so every tenant query starts with the company. (Key
 * relations default to ON UPDATE CASCADE in the ORM; ids never change, so
 * the DDL has plain foreign keys and the entity says so.) Table
 * `contact_list_member`; the DDL is in
 * ../migrations/Migration20251123010000_contacts.ts.
 */
export const ContactListMemberSchema = defineEntity({
  name: "ContactListMember",
  tableName: "contact_list_member",
  properties: {
    company: () =>
      p
        .manyToOne(CompanySchema)
        .primary()
        .fieldName("company_id")
        .deleteRule("cascade")
        .updateRule("no action")
        .foreignKeyName("contact_list_member_company_id_fkey"),
    list: () =>
      p
        .manyToOne(ContactListSchema)
        .primary()
        .fieldName("list_id")
        .deleteRule("cascade")
        .updateRule("no action")
        .foreignKeyName("contact_list_member_list_id_fkey"),
    contact: () =>
      p
        .manyToOne(ContactSchema)
        .primary()
        .fieldName("contact_id")
        .deleteRule("cascade")
        .updateRule("no action")
        .foreignKeyName("contact_list_member_contact_id_fkey"),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [{ properties: ["company", "contact"], name: "contact_list_member_contact_index" }],
});

export type ContactListMember = InferEntity<typeof ContactListMemberSchema>;
