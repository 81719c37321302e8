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
});

export type Suppression = InferEntity<typeof SuppressionSchema>;
