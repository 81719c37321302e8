import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * An address a company no longer sends to (hard bounce, complaint, or an
 * operator's decision). The email is stored lower-cased so one address has
 * one row. Table `suppression`, keyed by (company_id, email).
 */
export const SuppressionSchema = defineEntity({
  name: "Suppression",
  tableName: "suppression",
  properties: {
    company: () =>
      p.manyToOne(CompanySchema).primary().fieldName("company_id").deleteRule("cascade").foreignKeyName("suppression_company_id_fkey"),
    email: p.text().primary(),
    reason: p.text().check("reason IN ('bounce', 'complaint', 'manual')"),
    messageId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [
    {
      name: "suppression_company_created_index",
      // The company's list, newest first (keyset pages on created_at, email).
      // Raw for the DESC columns, as credit_ledger_company_index.
      expression: `create index "suppression_company_created_index" on "suppression" ("company_id", "created_at" desc, "email" desc)`,
    },
  ],
});

export type Suppression = InferEntity<typeof SuppressionSchema>;
