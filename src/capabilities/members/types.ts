import type { CompanyEntitlements } from "../accounts/types.ts";

/** Roles of a company member: Mail access = any member; Mail administration = owner or admin. */
export const MEMBER_ROLES = ["owner", "admin", "member"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export function isMemberRole(value: string): value is MemberRole {
  return (MEMBER_ROLES as readonly string[]).includes(value);
}

export interface MemberRecord {
  readonly id: string;
  readonly companyId: string;
  /** Lower-cased. */
  readonly email: string;
  readonly displayName: string;
  readonly role: MemberRole;
  readonly disabled: boolean;
  readonly createdAt: Date;
  readonly lastSignInAt: Date | null;
}

/** A live session with its member and company, as authentication resolves it. */
export interface SessionRecord {
  readonly sessionId: string;
  readonly member: MemberRecord;
  readonly company: { readonly id: string; readonly name: string; readonly entitlements: CompanyEntitlements };
  readonly createdAt: Date;
  /** The absolute end (12 hours after sign-in). */
  readonly expiresAt: Date;
}
