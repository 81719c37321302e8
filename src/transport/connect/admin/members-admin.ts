import type { ServiceImpl } from "@connectrpc/connect";
import type { Companies } from "../../../capabilities/accounts/index.ts";
import type { Members } from "../../../capabilities/members/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { signInLinkCommand, signInLinkCompany, signInLinkResponse } from "./mapping.ts";

/**
 * The AdminService RPC of members: sign-in links handed over by hand. A
 * company's members (its first owner too) are the MembersService's, which
 * operators call with x-mail-company-id.
 */
export type MembersAdmin = Pick<ServiceImpl<typeof AdminService>, "createSignInLink">;

export function membersAdmin(members: Members, companies: Companies): MembersAdmin {
  return {
    async createSignInLink(req, ctx) {
      const company = await companies.get(signInLinkCompany(req));
      return signInLinkResponse(await members.createSignInLink(signInLinkCommand(req, company, ctx)));
    },
  };
}
