/**
 * Roles of a company member: Mail access = any member; Mail administration =
 * owner or admin. Declared with the accounts, beside the principal that
 * carries a member's role; what each role may do is the members
 * capability's (members/roles.ts).
 */
export const MEMBER_ROLES = ["owner", "admin", "member"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export function isMemberRole(value: string): value is MemberRole {
  return (MEMBER_ROLES as readonly string[]).includes(value);
}
