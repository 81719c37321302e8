import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/** A message template of a company, unique by name per company. Table `template`. */
export const TemplateSchema = defineEntity({
  name: "Template",
  tableName: "template",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("template_company_id_fkey"),
    name: p.text().check("char_length(name) >= 1 AND char_length(name) <= 200"),
    subject: p.text(),
    html: p.text(),
    // `text` would read as a column type in SQL; the column is text_body.
    text: p.text().nullable().fieldName("text_body"),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    // The number of its latest version (template_version keeps the last 20).
    version: p.integer().default(1),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date())
      .defaultRaw("now()"),
  },
  uniques: [{ properties: ["company", "name"], name: "template_company_id_name_key" }],
});

export type Template = InferEntity<typeof TemplateSchema>;
