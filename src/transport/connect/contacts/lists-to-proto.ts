import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  ContactListRecord,
  CreateContactListCommand,
  DeleteContactListCommand,
  RenameContactListCommand,
} from "../../../capabilities/contacts/index.ts";
import type { AuditContext } from "../../../capabilities/audit/types.ts";
import {
  ContactListSchema,
  type ContactList,
  type CreateContactListRequest,
  type DeleteContactListRequest,
  type RenameContactListRequest,
} from "../../../gen/mail/v1/lists_pb.js";

/** The ListsService both ways: requests as the contact lists' commands, lists as the contract's ContactList. */

export function createContactListCommand(companyId: string, audit: AuditContext, req: CreateContactListRequest): CreateContactListCommand {
  return { companyId, name: req.name, audit };
}

export function renameContactListCommand(companyId: string, audit: AuditContext, req: RenameContactListRequest): RenameContactListCommand {
  return { companyId, id: req.id, name: req.name, audit };
}

export function deleteContactListCommand(companyId: string, audit: AuditContext, req: DeleteContactListRequest): DeleteContactListCommand {
  return { companyId, id: req.id, audit };
}

export function toContactListProto(record: ContactListRecord): ContactList {
  return create(ContactListSchema, {
    id: record.id,
    name: record.name,
    createdAt: timestampFromDate(record.createdAt),
    updatedAt: timestampFromDate(record.updatedAt),
    memberCount: record.memberCount,
  });
}
