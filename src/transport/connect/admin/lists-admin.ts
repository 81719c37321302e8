import type { ServiceImpl } from "@connectrpc/connect";
import type { ContactLists } from "../../../capabilities/contacts/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { toContactListProto } from "../contacts/contacts-to-proto.ts";
import { operatorAuditOf } from "../context.ts";

/**
 * AdminService handlers of contact lists: the ListsService's operations for
 * operators, on the company named in the request (the operator token is
 * checked by the auth interceptor). The same use cases, so the same rules
 * and answers; `company` resolves the company, which must exist.
 */
export type ListsAdmin = Pick<ServiceImpl<typeof AdminService>, "createContactList" | "listContactLists" | "renameContactList" | "deleteContactList">;

export function listsAdmin(lists: ContactLists, company: (req: { companyId: string }) => Promise<string>): ListsAdmin {
  return {
    async createContactList(req, ctx) {
      return { list: toContactListProto(await lists.create(await company(req), req.name, operatorAuditOf(ctx))) };
    },
    async listContactLists(req) {
      return { items: (await lists.list(await company(req))).map(toContactListProto) };
    },
    async renameContactList(req, ctx) {
      return { list: toContactListProto(await lists.rename(await company(req), req.id, req.name, operatorAuditOf(ctx))) };
    },
    async deleteContactList(req, ctx) {
      await lists.delete(await company(req), req.id, operatorAuditOf(ctx));
      return { id: req.id };
    },
  };
}
