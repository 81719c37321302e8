import type { ServiceImpl } from "@connectrpc/connect";
import type { ContactLists } from "../../../capabilities/contacts/index.ts";
import type { ListsService } from "../../../gen/mail/v1/lists_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { createContactListCommand, deleteContactListCommand, renameContactListCommand, toContactListProto } from "./lists-to-proto.ts";

/**
 * The ListsService, for the company of the caller (scope `mail.admin`,
 * checked by the auth interceptor from the contract).
 */
export function listsServiceImpl(lists: ContactLists): ServiceImpl<typeof ListsService> {
  return {
    async createContactList(req, ctx) {
      return { list: toContactListProto(await lists.create(createContactListCommand(callerOf(ctx).companyId, auditContextOf(ctx), req))) };
    },
    async listContactLists(_req, ctx) {
      return { items: (await lists.list({ companyId: callerOf(ctx).companyId })).map(toContactListProto) };
    },
    async renameContactList(req, ctx) {
      return { list: toContactListProto(await lists.rename(renameContactListCommand(callerOf(ctx).companyId, auditContextOf(ctx), req))) };
    },
    async deleteContactList(req, ctx) {
      await lists.delete(deleteContactListCommand(callerOf(ctx).companyId, auditContextOf(ctx), req));
      return { id: req.id };
    },
  };
}
