import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { TemplateSchema } from "./template.ts";

/**
 * A kept version of a template: its content as one change left it
 * (the store keeps the last 20 per template). Table `template_version`,
 * keyed by (template_id, version); deleted with its template.
 */
export const TemplateVersionSchema = defineEntity({
  name: "TemplateVersion",
  tableName: "template_version",
  properties: {
    template: () =>
      p.manyToOne(TemplateSchema).primary().fieldName("template_id").deleteRule("cascade").foreignKeyName("template_version_template_id_fkey"),
    version: p.integer().primary().check("version >= 1"),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("template_version_company_id_fkey"),
    name: p.text(),
    subject: p.text(),
    html: p.text(),
    text: p.text().nullable().fieldName("text_body"),
    // The audit actor's label: a member's email, a key's prefix, or `operator`.
    createdBy: p.text(),
    restoredFrom: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [{ properties: ["company"], name: "template_version_company_id_index" }],
});

export type TemplateVersion = InferEntity<typeof TemplateVersionSchema>;
