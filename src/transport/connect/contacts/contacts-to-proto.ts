import { create, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ContactListRecord, ContactRecord, ContactStatusName, ContactWrite, UpsertAnswer } from "../../../capabilities/contacts/index.ts";
import { enumValueToJson } from "../../../contract/json-codec.ts";
import { ContactListSchema, type ContactList } from "../../../gen/mail/v1/lists_pb.js";
import {
  ConsentSchema,
  ContactSchema,
  ContactStatus,
  ContactStatusSchema,
  UpsertContactResponseSchema,
  type Contact,
  type UpsertContactRequest,
  type UpsertContactResponse,
} from "../../../gen/mail/v1/mail_pb.js";

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

export function toUpsertContactResponse(answer: UpsertAnswer): UpsertContactResponse {
  return create(UpsertContactResponseSchema, { ...contactInit(answer.contact), created: answer.created, marketable: answer.marketable });
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

export function toContactListProto(record: ContactListRecord): ContactList {
  return create(ContactListSchema, {
    id: record.id,
    name: record.name,
    createdAt: timestampFromDate(record.createdAt),
    updatedAt: timestampFromDate(record.updatedAt),
  });
}
