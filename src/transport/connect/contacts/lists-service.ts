import type { ServiceImpl } from "@connectrpc/connect";
import type { ContactLists } from "../../../capabilities/contacts/index.ts";
import type { ListsService } from "../../../gen/mail/v1/lists_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { toContactListProto } from "./contacts-to-proto.ts";

/**
 * The ListsService: each RPC maps the contract's messages to one use case of
 * the contact lists, for the company of the calling key (scope `mail.admin`,
 * checked by the auth interceptor from the contract).
 */
export function listsServiceImpl(lists: ContactLists): ServiceImpl<typeof ListsService> {
  return {
    async createContactList(req, ctx) {
      return { list: toContactListProto(await lists.create(callerOf(ctx).companyId, req.name, auditContextOf(ctx))) };
    },
    async listContactLists(_req, ctx) {
      return { items: (await lists.list(callerOf(ctx).companyId)).map(toContactListProto) };
    },
    async renameContactList(req, ctx) {
      return { list: toContactListProto(await lists.rename(callerOf(ctx).companyId, req.id, req.name, auditContextOf(ctx))) };
    },
    async deleteContactList(req, ctx) {
      await lists.delete(callerOf(ctx).companyId, req.id, auditContextOf(ctx));
      return { id: req.id };
    },
  };
}
