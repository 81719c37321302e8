import type { ServiceImpl } from "@connectrpc/connect";
import type { ContactLists } from "../../../capabilities/contacts/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { toContactListProto } from "../contacts/contacts-to-proto.ts";

/**
 * AdminService handlers of contact lists: the ListsService's operations for
 * operators, on the company named in the request (the operator token is
 * checked by the auth interceptor). The same use cases, so the same rules
 * and answers; `company` resolves the company, which must exist.
 */
export type ListsAdmin = Pick<ServiceImpl<typeof AdminService>, "createContactList" | "listContactLists" | "renameContactList" | "deleteContactList">;

export function listsAdmin(lists: ContactLists, company: (req: { companyId: string }) => Promise<string>): ListsAdmin {
  return {
    async createContactList(req) {
      return { list: toContactListProto(await lists.create(await company(req), req.name)) };
    },
    async listContactLists(req) {
      return { items: (await lists.list(await company(req))).map(toContactListProto) };
    },
    async renameContactList(req) {
      return { list: toContactListProto(await lists.rename(await company(req), req.id, req.name)) };
    },
    async deleteContactList(req) {
      await lists.delete(await company(req), req.id);
      return { id: req.id };
    },
  };
}
