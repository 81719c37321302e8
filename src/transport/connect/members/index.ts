import type { ServiceImpl } from "@connectrpc/connect";
import type { Members } from "../../../capabilities/members/index.ts";
import type { MembersService } from "../../../gen/mail/v1/members_pb.js";
import {
  endMemberSessionsResponse,
  inviteMemberCommand,
  inviteMemberResponse,
  listMembersCommand,
  listMembersResponse,
  memberCommand,
  removeMemberResponse,
  updateMemberCommand,
  updateMemberResponse,
} from "./mapping.ts";

/** MembersService: owner/admin sessions and operators (API keys refused by the contract). */
export function membersServiceImpl(members: Members): ServiceImpl<typeof MembersService> {
  return {
    async listMembers(req, ctx) {
      return listMembersResponse(await members.list(listMembersCommand(req, ctx)));
    },
    async inviteMember(req, ctx) {
      return inviteMemberResponse(await members.invite(inviteMemberCommand(req, ctx)));
    },
    async updateMember(req, ctx) {
      return updateMemberResponse(await members.update(updateMemberCommand(req, ctx)));
    },
    async removeMember(req, ctx) {
      return removeMemberResponse(await members.remove(memberCommand(req, ctx)));
    },
    async endMemberSessions(req, ctx) {
      return endMemberSessionsResponse(await members.endSessions(memberCommand(req, ctx)));
    },
  };
}
