import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  Acting,
  InviteMemberCommand,
  InviteMemberResult,
  ListMembersCommand,
  ListMembersResult,
  MemberCommand,
  MemberRecord,
  MemberRole as DomainRole,
  UpdateMemberCommand,
} from "../../../capabilities/members/index.ts";
import {
  type EndMemberSessionsRequest,
  type EndMemberSessionsResponseSchema,
  type InviteMemberRequest,
  type InviteMemberResponseSchema,
  type ListMembersRequest,
  type ListMembersResponseSchema,
  type Member,
  MemberRole,
  MemberSchema,
  type RemoveMemberRequest,
  type RemoveMemberResponseSchema,
  type UpdateMemberRequest,
  type UpdateMemberResponseSchema,
} from "../../../gen/mail/v1/members_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/** The MembersService's proto <-> domain mapping, both directions. */

const TO_PROTO: Record<DomainRole, MemberRole> = { owner: MemberRole.OWNER, admin: MemberRole.ADMIN, member: MemberRole.MEMBER };

/** The contract's role as the domain's; UNSPECIFIED is `undefined` (the use case's default). */
export function memberRoleOf(role: MemberRole | undefined): DomainRole | undefined {
  switch (role) {
    case MemberRole.OWNER:
      return "owner";
    case MemberRole.ADMIN:
      return "admin";
    case MemberRole.MEMBER:
      return "member";
    default:
      return undefined;
  }
}

export function memberMessage(member: MemberRecord): Member {
  return create(MemberSchema, {
    id: member.id,
    email: member.email,
    displayName: member.displayName,
    role: TO_PROTO[member.role],
    disabled: member.disabled,
    createdAt: optionalTimestamp(member.createdAt),
    lastSignInAt: optionalTimestamp(member.lastSignInAt),
  });
}

/** Who acts: the audit context and the member's role (operators: none, they may do what an owner may). */
export function actingOf(ctx: HandlerContext): Acting {
  const caller = callerOf(ctx);
  return { audit: auditContextOf(ctx), role: caller.actor.kind === "member" ? caller.actor.role : undefined };
}

export function listMembersCommand(req: ListMembersRequest, ctx: HandlerContext): ListMembersCommand {
  return { companyId: callerOf(ctx).companyId, limit: req.limit, cursor: req.cursor };
}

export function listMembersResponse(page: ListMembersResult): MessageInitShape<typeof ListMembersResponseSchema> {
  return { items: page.items.map(memberMessage), nextCursor: page.nextCursor ?? undefined };
}

export function inviteMemberCommand(req: InviteMemberRequest, ctx: HandlerContext): InviteMemberCommand {
  return { companyId: callerOf(ctx).companyId, email: req.email, displayName: req.displayName, role: memberRoleOf(req.role), acting: actingOf(ctx) };
}

export function inviteMemberResponse(invited: InviteMemberResult): MessageInitShape<typeof InviteMemberResponseSchema> {
  return {
    member: memberMessage(invited.member),
    signInUrl: invited.signInUrl,
    emailed: invited.emailed,
    signInUrlExpiresAt: optionalTimestamp(invited.expiresAt),
  };
}

export function updateMemberCommand(req: UpdateMemberRequest, ctx: HandlerContext): UpdateMemberCommand {
  return {
    companyId: callerOf(ctx).companyId,
    memberId: req.id,
    role: req.role === undefined ? undefined : memberRoleOf(req.role),
    disabled: req.disabled,
    displayName: req.displayName,
    acting: actingOf(ctx),
  };
}

export function updateMemberResponse(member: MemberRecord): MessageInitShape<typeof UpdateMemberResponseSchema> {
  return { member: memberMessage(member) };
}

/** RemoveMember and EndMemberSessions: one member, by id. */
export function memberCommand(req: RemoveMemberRequest | EndMemberSessionsRequest, ctx: HandlerContext): MemberCommand {
  return { companyId: callerOf(ctx).companyId, memberId: req.id, acting: actingOf(ctx) };
}

export function removeMemberResponse(removed: MemberRecord): MessageInitShape<typeof RemoveMemberResponseSchema> {
  return { id: removed.id };
}

export function endMemberSessionsResponse(ended: number): MessageInitShape<typeof EndMemberSessionsResponseSchema> {
  return { ended };
}
