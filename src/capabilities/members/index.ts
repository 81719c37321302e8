export { MEMBER_ROLES, isMemberRole, type MemberRecord, type MemberRole, type SessionRecord } from "./types.ts";
export { administers, scopesOfRole } from "./roles.ts";
export type { AuditNote, MemberPatch, MembersStore, NewMember, SignInMailer } from "./ports.ts";
export {
  MembersService,
  SIGN_IN_LINK_TTL_MS,
  type Acting,
  type AddMemberCommand,
  type InviteMemberCommand,
  type InviteMemberResult,
  type MemberCommand,
  type MembersServiceOptions,
  type SignInLinkCommand,
  type SignInLinkResult,
  type UpdateMemberCommand,
} from "./members-service.ts";
export {
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SessionsService,
  type ExchangeSignInLinkCommand,
  type ExchangeSignInLinkResult,
  type SessionsServiceOptions,
} from "./sessions-service.ts";
export { renderSignInEmail, type SignInEmail } from "./sign-in-email.ts";
