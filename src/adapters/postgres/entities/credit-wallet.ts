import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * The Mail credit balance of a company; the row is created on the first
 * change. Written by plain SQL only (../credits/postgres-credits-store.ts:
 * conditional decrements and their ledger row in one transaction, on the
 * send path); the entity describes the schema.
 */
export const CreditWalletSchema = defineEntity({
  name: "CreditWallet",
  tableName: "credit_wallet",
  properties: {
    company: () =>
      p
        .manyToOne(CompanySchema)
        .primary()
        .fieldName("company_id")
        .deleteRule("cascade")
        // The ORM defaults a primary-key relation to ON UPDATE CASCADE; the table has no such rule.
        .updateRule("no action")
        .foreignKeyName("credit_wallet_company_id_fkey"),
    // Counts of credits stay far below 2^53: read as a JS number.
    balance: p.bigint("number").defaultRaw("0").check("balance >= 0"),
    updatedAt: p.datetime().defaultRaw("now()"),
  },
});

export type CreditWallet = InferEntity<typeof CreditWalletSchema>;
