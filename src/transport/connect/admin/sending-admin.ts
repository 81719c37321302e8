import type { ServiceImpl } from "@connectrpc/connect";
import type { SendingSetup } from "../../../capabilities/sending-setup/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import {
  createSenderCommand,
  createSendingDomainCommand,
  listSendersCommand,
  listSendingDomainsCommand,
  senderMessage,
  sendingDomainMessage,
  setDefaultSenderCommand,
  verifySendingDomainCommand,
} from "./mapping.ts";

/**
 * AdminService handlers of sending domains and senders (a company's templates
 * are the TemplatesService's, src/transport/connect/templates). The
 * operator token is checked by the auth interceptor; the rules are in
 * src/capabilities/sending-setup. Served over gRPC and Connect only.
 */
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
      return { domain: sendingDomainMessage(await setup.domains.create(createSendingDomainCommand(req, ctx))) };
    },
    async verifySendingDomain(req, ctx) {
      return { domain: sendingDomainMessage(await setup.domains.verify(verifySendingDomainCommand(req, ctx))) };
    },
    async listSendingDomains(req) {
      return { domains: (await setup.domains.list(listSendingDomainsCommand(req))).map(sendingDomainMessage) };
    },
    async createSender(req, ctx) {
      return { sender: senderMessage(await setup.senders.create(createSenderCommand(req, ctx))) };
    },
    async listSenders(req) {
      return { senders: (await setup.senders.list(listSendersCommand(req))).map(senderMessage) };
    },
    async setDefaultSender(req, ctx) {
      return { sender: senderMessage(await setup.senders.setDefault(setDefaultSenderCommand(req, ctx))) };
    },
  };
}
