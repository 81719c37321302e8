import { create } from "@bufbuild/protobuf";
import { optionalTimestamp } from "../timestamps.ts";
import type { ServiceImpl } from "@connectrpc/connect";
import type { SenderView, SendingDomainView, SendingSetup } from "../../../capabilities/sending-setup/index.ts";
import {
  AdminService,
  DnsRecordSchema,
  type Sender,
  SenderSchema,
  type SendingDomain,
  SendingDomainSchema,
} from "../../../gen/mail/v1/admin_pb.js";
import { operatorAuditOf } from "../context.ts";

/**
 * AdminService handlers of sending domains and senders (a company's templates
 * are the TemplatesService's, src/transport/connect/templates). The
 * operator token is checked by the auth interceptor; the rules are in
 * src/capabilities/sending-setup. Served over gRPC and Connect only.
 */
function sendingDomainMessage(view: SendingDomainView): SendingDomain {
  return create(SendingDomainSchema, {
    id: view.id,
    companyId: view.companyId,
    domain: view.domain,
    returnPathDomain: view.returnPathDomain,
    dkimSelector: view.dkimSelector,
    dkimVerified: view.dkimVerified,
    spfVerified: view.spfVerified,
    dmarcVerified: view.dmarcVerified,
    verified: view.verified,
    verificationOverridden: view.verificationOverridden,
    dnsRecords: view.dnsRecords.map((record) => create(DnsRecordSchema, { ...record })),
    lastCheckedAt: optionalTimestamp(view.lastCheckedAt),
    createdAt: optionalTimestamp(view.createdAt),
  });
}

function senderMessage(view: SenderView): Sender {
  return create(SenderSchema, {
    id: view.id,
    companyId: view.companyId,
    domainId: view.domainId,
    email: view.email,
    name: view.name ?? undefined,
    isDefault: view.isDefault,
    verified: view.verified,
    createdAt: optionalTimestamp(view.createdAt),
  });
}

/** The AdminService RPCs of sending domains and senders. */
export type SendingAdmin = Pick<
  ServiceImpl<typeof AdminService>,
  | "createSendingDomain"
  | "verifySendingDomain"
  | "listSendingDomains"
  | "createSender"
  | "listSenders"
  | "setDefaultSender"
>;

export function sendingAdmin(setup: SendingSetup): SendingAdmin {
  return {
    async createSendingDomain(req, ctx) {
      return { domain: sendingDomainMessage(await setup.domains.createDomain(req.companyId, req.domain, operatorAuditOf(ctx))) };
    },
    async verifySendingDomain(req, ctx) {
      return {
        domain: sendingDomainMessage(await setup.domains.verifyDomain(req.companyId, req.domainId, { override: req.override }, operatorAuditOf(ctx))),
      };
    },
    async listSendingDomains(req) {
      return { domains: (await setup.domains.listDomains(req.companyId)).map(sendingDomainMessage) };
    },
    async createSender(req, ctx) {
      const input = { email: req.email, name: req.name ?? null, makeDefault: req.makeDefault };
      const sender = await setup.senders.createSender(req.companyId, input, operatorAuditOf(ctx));
      return { sender: senderMessage(sender) };
    },
    async listSenders(req) {
      return { senders: (await setup.senders.listSenders(req.companyId)).map(senderMessage) };
    },
    async setDefaultSender(req, ctx) {
      return { sender: senderMessage(await setup.senders.setDefaultSender(req.companyId, req.senderId, operatorAuditOf(ctx))) };
    },
  };
}
