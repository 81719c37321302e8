import type { ServiceImpl } from "@connectrpc/connect";
import type { Contacts } from "../../../capabilities/contacts/index.ts";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import { contactStatusFromProto, contactWriteFromProto, toContactProto, toUpsertContactResponse } from "./contacts-to-proto.ts";

export type ContactRpcs = Pick<ServiceImpl<typeof MailService>, "listContacts" | "getContact" | "upsertContact">;

/**
 * ListContacts, GetContact and UpsertContact of the MailService: the
 * contract's messages to and from the contacts capability, for the company
 * of the calling key (scopes `mail.contacts.read` / `mail.contacts.write`,
 * checked by the auth interceptor from the contract).
 */
export function contactRpcs(contacts: Contacts): ContactRpcs {
  return {
    async upsertContact(req, ctx) {
      return toUpsertContactResponse(await contacts.upsertContact(callerOf(ctx).companyId, contactWriteFromProto(req)));
    },
    async getContact(req, ctx) {
      return { contact: toContactProto(await contacts.getContact(callerOf(ctx).companyId, req.id)) };
    },
    async listContacts(req, ctx) {
      const page = await contacts.listContacts(callerOf(ctx).companyId, {
        limit: req.limit,
        cursor: req.cursor,
        status: contactStatusFromProto(req.status),
        q: req.q,
        tag: req.tag,
        listId: req.listId,
      });
      return { items: page.items.map(toContactProto), nextCursor: page.nextCursor ?? undefined };
    },
  };
}
