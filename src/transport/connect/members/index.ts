import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Acting, MemberRecord, MemberRole as DomainRole, MembersService } from "../../../capabilities/members/index.ts";
import { type Member, MemberRole, MemberSchema, MembersService as MembersServiceDesc } from "../../../gen/mail/v1/members_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

const TO_PROTO: Record<DomainRole, MemberRole> = { owner: MemberRole.OWNER, admin: MemberRole.ADMIN, member: MemberRole.MEMBER };

export function memberRoleMessage(role: DomainRole): MemberRole {
  return TO_PROTO[role];
}

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

/** MembersService: owner/admin sessions and operators (API keys refused by the contract). */
export function membersServiceImpl(members: MembersService): ServiceImpl<typeof MembersServiceDesc> {
  return {
    async listMembers(_req, ctx) {
      return { items: (await members.list({ companyId: callerOf(ctx).companyId })).map(memberMessage) };
    },
    async inviteMember(req, ctx) {
      const invited = await members.invite({
        companyId: callerOf(ctx).companyId,
        email: req.email,
        displayName: req.displayName,
        role: memberRoleOf(req.role),
        acting: actingOf(ctx),
      });
      return {
        member: memberMessage(invited.member),
        signInUrl: invited.signInUrl,
        emailed: invited.emailed,
        signInUrlExpiresAt: optionalTimestamp(invited.expiresAt),
      };
    },
    async updateMember(req, ctx) {
      const role = req.role === undefined ? undefined : memberRoleOf(req.role);
      const updated = await members.update({
        companyId: callerOf(ctx).companyId,
        memberId: req.id,
        role,
        disabled: req.disabled,
        displayName: req.displayName,
        acting: actingOf(ctx),
      });
      return { member: memberMessage(updated) };
    },
    async removeMember(req, ctx) {
      const removed = await members.remove({ companyId: callerOf(ctx).companyId, memberId: req.id, acting: actingOf(ctx) });
      return { id: removed.id };
    },
    async endMemberSessions(req, ctx) {
      const ended = await members.endSessions({ companyId: callerOf(ctx).companyId, memberId: req.id, acting: actingOf(ctx) });
      return { ended };
    },
  };
}
