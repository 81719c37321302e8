import type { ServiceImpl } from "@connectrpc/connect";
import type { SendingSetup } from "../../../capabilities/sending-setup/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { domainMessage } from "../domains/mapping.ts";
import { operatorAuditOf } from "../context.ts";

/**
 * The one AdminService handler of sending domains: the operator's
 * verification override (development only). Companies add, check and
 * delete their domains and senders through DomainsService and
 * SendersService, which operators call with x-mail-company-id.
 */
export type SendingAdmin = Pick<ServiceImpl<typeof AdminService>, "overrideDomainVerification">;

export function sendingAdmin(setup: SendingSetup): SendingAdmin {
  return {
    async overrideDomainVerification(req, ctx) {
      const domain = await setup.domains.overrideVerification({ companyId: req.companyId, domainId: req.domainId, audit: operatorAuditOf(ctx) });
      return { domain: domainMessage(domain) };
    },
  };
}
