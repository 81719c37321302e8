import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * One change of a company's credit balance (`delta`), written in the same
 * transaction as the change. `credit_ledger_once_per_message` makes a
 * message chargeable once and refundable once, whatever retries happen.
 * Written by raw SQL only (see credit-wallet.ts).
 */
export const CreditLedgerSchema = defineEntity({
  name: "CreditLedger",
  tableName: "credit_ledger",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("credit_ledger_company_id_fkey"),
    delta: p.bigint("number"),
    reason: p.text().check("reason IN ('grant', 'adjustment', 'charge', 'refund')"),
    // No foreign key: ledger rows outlive the message log.
    messageId: p.uuid().nullable(),
    note: p.text().default(""),
    createdAt: p.datetime().defaultRaw("now()"),
  },
  uniques: [{ properties: ["messageId", "reason"], name: "credit_ledger_once_per_message", where: "message_id IS NOT NULL" }],
  indexes: [
    {
      name: "credit_ledger_company_index",
      // Raw on purpose: MikroORM 7.2's index introspection matches "id"
      // inside "company_id" and never sees the DESC, so a structured
      // `columns` declaration would diff forever. Raw indexes compare by name.
      expression: `create index "credit_ledger_company_index" on "credit_ledger" ("company_id", "id" desc)`,
    },
  ],
});

export type CreditLedger = InferEntity<typeof CreditLedgerSchema>;
