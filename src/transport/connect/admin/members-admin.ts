import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountsService } from "../../../capabilities/accounts/index.ts";
import type { MembersService } from "../../../capabilities/members/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { operatorAuditOf } from "../context.ts";
import { memberMessage, memberRoleOf } from "../members/index.ts";
import { optionalTimestamp } from "../timestamps.ts";

/** The AdminService RPCs of members: the operator's first owner, and sign-in links handed over by hand. */
export type MembersAdmin = Pick<ServiceImpl<typeof AdminService>, "addMember" | "createSignInLink">;

export function membersAdmin(members: MembersService, accounts: AccountsService): MembersAdmin {
  return {
    async addMember(req, ctx) {
      const company = await accounts.getCompany(req.companyId);
      const member = await members.add({
        companyId: company.id,
        email: req.email,
        displayName: req.displayName,
        role: memberRoleOf(req.role),
        acting: { audit: operatorAuditOf(ctx), role: undefined },
      });
      return { member: memberMessage(member) };
    },
    async createSignInLink(req, ctx) {
      const company = await accounts.getCompany(req.companyId);
      const link = await members.createSignInLink({ companyId: company.id, email: req.email, acting: { audit: operatorAuditOf(ctx), role: undefined } });
      return { member: memberMessage(link.member), signInUrl: link.signInUrl, expiresAt: optionalTimestamp(link.expiresAt) };
    },
  };
}
