import type { ServiceImpl } from "@connectrpc/connect";
import type { Contacts } from "../../../capabilities/contacts/index.ts";
import type { MailService } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import {
  getContactCommand,
  listContactsCommand,
  toContactProto,
  toListContactsResponse,
  toUpsertContactResponse,
  upsertContactCommand,
} from "./contacts-to-proto.ts";

export type ContactRpcs = Pick<ServiceImpl<typeof MailService>, "listContacts" | "getContact" | "upsertContact">;

/**
 * ListContacts, GetContact and UpsertContact of the MailService, for the
 * company of the caller (scopes `mail.contacts.read` / `mail.contacts.write`,
 * checked by the auth interceptor from the contract).
 */
export function contactRpcs(contacts: Contacts): ContactRpcs {
  return {
    async upsertContact(req, ctx) {
      return toUpsertContactResponse(await contacts.upsert(upsertContactCommand(callerOf(ctx).companyId, req)));
    },
    async getContact(req, ctx) {
      return { contact: toContactProto(await contacts.get(getContactCommand(callerOf(ctx).companyId, req))) };
    },
    async listContacts(req, ctx) {
      return toListContactsResponse(await contacts.list(listContactsCommand(callerOf(ctx).companyId, req)));
    },
  };
}
