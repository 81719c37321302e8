import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { MemberSchema } from "./member.ts";

/**
 * A one-time sign-in link: only SHA-256 of its token is stored; single use
 * (`usedAt`), valid until `expiresAt` (15 minutes). Table `sign_in_link`.
 */
export const SignInLinkSchema = defineEntity({
  name: "SignInLink",
  tableName: "sign_in_link",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    companyId: p.uuid(),
    member: () =>
      p.manyToOne(MemberSchema).fieldName("member_id").deleteRule("cascade").foreignKeyName("sign_in_link_member_id_fkey").index("sign_in_link_member_index"),
    tokenHash: p.blob(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: "tokenHash", name: "sign_in_link_token_hash_unique" }],
});

export type SignInLink = InferEntity<typeof SignInLinkSchema>;
