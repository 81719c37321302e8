import type { MemberRole } from "../accounts/member-roles.ts";
import type { CompanyEntitlements } from "../accounts/types.ts";

export { isMemberRole, MEMBER_ROLES, type MemberRole } from "../accounts/member-roles.ts";

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
