import type { ServiceImpl } from "@connectrpc/connect";
import type { SendingSetup } from "../../../capabilities/sending-setup/index.ts";
import type { DomainsService, SendersService } from "../../../gen/mail/v1/domains_pb.js";
import {
  checkDomainCommand,
  createDomainCommand,
  createSenderCommand,
  deleteDomainCommand,
  domainMessage,
  domainQuery,
  listDomainsCommand,
  listSendersCommand,
  removeSenderCommand,
  senderMessage,
  setDefaultSenderCommand,
} from "./mapping.ts";

/** DomainsService: API keys, member sessions and operators acting for the company (one handler per RPC). */
export function domainsServiceImpl(setup: SendingSetup): ServiceImpl<typeof DomainsService> {
  const domains = setup.domains;
  return {
    async createDomain(req, ctx) {
      return { domain: domainMessage(await domains.create(createDomainCommand(req, ctx))) };
    },
    async listDomains(_req, ctx) {
      return { items: (await domains.list(listDomainsCommand(ctx))).map(domainMessage) };
    },
    async getDomain(req, ctx) {
      return { domain: domainMessage(await domains.get(domainQuery(req, ctx))) };
    },
    async checkDomain(req, ctx) {
      return { domain: domainMessage(await domains.check(checkDomainCommand(req, ctx))) };
    },
    async deleteDomain(req, ctx) {
      return await domains.remove(deleteDomainCommand(req, ctx));
    },
  };
}

/** SendersService: API keys, member sessions and operators acting for the company (one handler per RPC). */
export function sendersServiceImpl(setup: SendingSetup): ServiceImpl<typeof SendersService> {
  const senders = setup.senders;
  return {
    async createSender(req, ctx) {
      return { sender: senderMessage(await senders.create(createSenderCommand(req, ctx))) };
    },
    async listSenders(_req, ctx) {
      return { items: (await senders.list(listSendersCommand(ctx))).map(senderMessage) };
    },
    async setDefaultSender(req, ctx) {
      return { sender: senderMessage(await senders.setDefault(setDefaultSenderCommand(req, ctx))) };
    },
    async deleteSender(req, ctx) {
      return { id: (await senders.remove(removeSenderCommand(req, ctx))).id };
    },
  };
}
