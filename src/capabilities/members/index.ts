export { MEMBER_ROLES, isMemberRole, type MemberRecord, type MemberRole, type SessionRecord } from "./types.ts";
export { administers, scopesOfRole } from "./roles.ts";
export type { AuditNote, MemberPatch, MembersStore, NewMember, SignInMailer } from "./ports.ts";
export {
  Members,
  SIGN_IN_LINK_TTL_MS,
  type Acting,
  type GetMemberCommand,
  type InviteMemberCommand,
  type InviteMemberResult,
  type ListMembersCommand,
  type ListMembersResult,
  type MemberCommand,
  type MembersDependencies,
  type SignInLinkCommand,
  type SignInLinkResult,
  type UpdateMemberCommand,
} from "./members.ts";
export {
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  Sessions,
  type ExchangeSignInLinkCommand,
  type ExchangeSignInLinkResult,
  type SessionsDependencies,
  type SignOutCommand,
} from "./sessions.ts";
export { renderSignInEmail, type SignInEmail } from "./sign-in-email.ts";
