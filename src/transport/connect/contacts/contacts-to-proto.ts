import { create, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  ContactPage,
  ContactRecord,
  ContactStatusName,
  ContactWrite,
  GetContactCommand,
  ListContactsCommand,
  UpsertContactCommand,
  UpsertContactResult,
} from "../../../capabilities/contacts/index.ts";
import { enumValueToJson } from "../../../contract/json-codec.ts";
import {
  ConsentSchema,
  ContactSchema,
  ContactStatus,
  ContactStatusSchema,
  ListContactsResponseSchema,
  UpsertContactResponseSchema,
  type Contact,
  type GetContactRequest,
  type ListContactsRequest,
  type ListContactsResponse,
  type UpsertContactRequest,
  type UpsertContactResponse,
} from "../../../gen/mail/v1/mail_pb.js";

/**
 * The MailService's contact RPCs (ListContacts, GetContact, UpsertContact)
 * both ways: requests as the contacts capability's commands, its results
 * as the contract's messages. The capability validates: this only changes
 * the form.
 */

const STATUS: Readonly<Record<ContactStatusName, ContactStatus>> = {
  subscribed: ContactStatus.SUBSCRIBED,
  pending: ContactStatus.PENDING,
  unsubscribed: ContactStatus.UNSUBSCRIBED,
  suppressed: ContactStatus.SUPPRESSED,
  bounced: ContactStatus.BOUNCED,
  complained: ContactStatus.COMPLAINED,
};

export function contactStatusToProto(status: ContactStatusName): ContactStatus {
  return STATUS[status];
}

/**
 * A status of a request as the capability's name (`subscribed`, ...):
 * unset and UNSPECIFIED are "not sent"; a number the contract does not know
 * (a gRPC caller can send any) is passed on as its digits, which the
 * capability refuses naming the field.
 */
export function contactStatusFromProto(status: ContactStatus | undefined): string | undefined {
  if (status === undefined || status === ContactStatus.UNSPECIFIED) return undefined;
  return enumValueToJson(ContactStatusSchema, status) ?? String(status);
}

/** The fields of a contact record as the contract's `Contact` (also the body of the upsert answer). */
function contactInit(record: ContactRecord) {
  return {
    id: record.id,
    email: record.email,
    firstName: record.firstName ?? undefined,
    lastName: record.lastName ?? undefined,
    company: record.company ?? undefined,
    phone: record.phone ?? undefined,
    locale: record.locale ?? undefined,
    attributes: { ...record.attributes },
    tags: [...record.tags],
    listIds: [...record.listIds],
    status: contactStatusToProto(record.status),
    consent: record.consent
      ? create(ConsentSchema, {
          source: record.consent.source,
          at: timestampFromDate(record.consent.at),
          reference: record.consent.reference ?? undefined,
        })
      : undefined,
    createdAt: timestampFromDate(record.createdAt),
    updatedAt: timestampFromDate(record.updatedAt),
  };
}

export function toContactProto(record: ContactRecord): Contact {
  return create(ContactSchema, contactInit(record));
}

export function toUpsertContactResponse(result: UpsertContactResult): UpsertContactResponse {
  return create(UpsertContactResponseSchema, { ...contactInit(result.contact), created: result.created, marketable: result.marketable });
}

export function upsertContactCommand(companyId: string, req: UpsertContactRequest): UpsertContactCommand {
  return { companyId, ...contactWriteFromProto(req) };
}

export function getContactCommand(companyId: string, req: GetContactRequest): GetContactCommand {
  return { companyId, idOrEmail: req.id };
}

export function listContactsCommand(companyId: string, req: ListContactsRequest): ListContactsCommand {
  return { companyId, limit: req.limit, cursor: req.cursor, status: contactStatusFromProto(req.status), q: req.q, tag: req.tag, listId: req.listId };
}

export function toListContactsResponse(page: ContactPage): ListContactsResponse {
  return create(ListContactsResponseSchema, { items: page.items.map(toContactProto), nextCursor: page.nextCursor ?? undefined });
}

/** The request as the capability's unvalidated write: unset fields stay undefined ("keep the stored value"). */
export function contactWriteFromProto(req: UpsertContactRequest): ContactWrite {
  return {
    email: req.email,
    firstName: req.firstName,
    lastName: req.lastName,
    company: req.company,
    phone: req.phone,
    locale: req.locale,
    attributes: req.attributes,
    tags: req.tags ? toJson(ListValueSchema, req.tags) : undefined,
    listIds: req.listIds ? toJson(ListValueSchema, req.listIds) : undefined,
    status: contactStatusFromProto(req.status),
    consent: req.consent
      ? { source: req.consent.source, at: req.consent.at ? timestampDate(req.consent.at) : undefined, reference: req.consent.reference }
      : undefined,
  };
}
