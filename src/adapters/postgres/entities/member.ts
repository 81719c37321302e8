import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A person of a company: signs in with one-time links, gets the
 * scopes of `role`. Table `member`; the DDL is in
 * ../migrations/Migration20251129000000_members_sessions_audit.ts.
 */
export const MemberSchema = defineEntity({
  name: "Member",
  tableName: "member",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("member_company_id_fkey"),
    /** Lower-cased. */
    email: p.text(),
    displayName: p.text().defaultRaw("''"),
    role: p.text().check("role in ('owner', 'admin', 'member')"),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    lastSignInAt: p.datetime().nullable(),
    disabledAt: p.datetime().nullable(),
    /** At most one sign-in email per address per minute. */
    lastLinkEmailedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ["company", "email"], name: "member_company_email_unique" }],
});

export type Member = InferEntity<typeof MemberSchema>;
