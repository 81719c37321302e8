import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { MemberSchema } from "./member.ts";

/**
 * A member's server-side session: only SHA-256 of the cookie value is
 * stored. Ends 30 minutes after `lastSeenAt` or at `expiresAt` (12 hours
 * after sign-in). Table `member_session`.
 */
export const MemberSessionSchema = defineEntity({
  name: "MemberSession",
  tableName: "member_session",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    companyId: p.uuid(),
    member: () =>
      p
        .manyToOne(MemberSchema)
        .fieldName("member_id")
        .deleteRule("cascade")
        .foreignKeyName("member_session_member_id_fkey")
        .index("member_session_member_index"),
    secretHash: p.blob(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    lastSeenAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    expiresAt: p.datetime(),
  },
  uniques: [{ properties: "secretHash", name: "member_session_secret_hash_unique" }],
});

export type MemberSession = InferEntity<typeof MemberSessionSchema>;
