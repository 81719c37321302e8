import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CheckSendingDomainCommand,
  CreateSenderCommand,
  CreateSendingDomainCommand,
  DeleteSendingDomainCommand,
  DnsRecordPurpose as DomainPurpose,
  DnsRecordState as DomainRecordState,
  DnsRecordView,
  DomainStatus as DomainDomainStatus,
  ListSendersCommand,
  ListSendingDomainsCommand,
  RemoveSenderCommand,
  SenderView,
  SendingDomainCommand,
  SendingDomainView,
  SetDefaultSenderCommand,
} from "../../../capabilities/sending-setup/index.ts";
import {
  type CheckDomainRequest,
  type CreateDomainRequest,
  type CreateSenderRequest,
  type DeleteDomainRequest,
  type DeleteSenderRequest,
  type DnsRecord,
  DnsRecordPurpose,
  DnsRecordSchema,
  DnsRecordState,
  DnsRecordType,
  type Domain,
  DomainSchema,
  DomainStatus,
  type GetDomainRequest,
  type Sender,
  SenderSchema,
  type SetDefaultSenderRequest,
} from "../../../gen/mail/v1/domains_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/** The DomainsService's and SendersService's proto <-> domain mapping, both directions; the company is the caller's. */

const STATUS: Record<DomainDomainStatus, DomainStatus> = {
  pending: DomainStatus.PENDING,
  verified: DomainStatus.VERIFIED,
  degraded: DomainStatus.DEGRADED,
};

const PURPOSE: Record<DomainPurpose, DnsRecordPurpose> = {
  dkim: DnsRecordPurpose.DKIM,
  spf: DnsRecordPurpose.SPF,
  return_path: DnsRecordPurpose.RETURN_PATH,
  dmarc: DnsRecordPurpose.DMARC,
};

const STATE: Record<DomainRecordState, DnsRecordState> = {
  unchecked: DnsRecordState.UNCHECKED,
  verified: DnsRecordState.VERIFIED,
  missing: DnsRecordState.MISSING,
  wrong: DnsRecordState.WRONG,
};

function dnsRecordMessage(record: DnsRecordView): DnsRecord {
  return create(DnsRecordSchema, {
    type: record.type === "MX" ? DnsRecordType.MX : DnsRecordType.TXT,
    name: record.name,
    value: record.value,
    purpose: PURPOSE[record.purpose],
    state: STATE[record.state],
    found: [...record.found],
  });
}

export function domainMessage(view: SendingDomainView): Domain {
  return create(DomainSchema, {
    id: view.id,
    domain: view.domain,
    returnPathDomain: view.returnPathDomain,
    dkimSelector: view.dkimSelector,
    status: STATUS[view.status],
    verificationOverridden: view.verificationOverridden,
    records: view.dnsRecords.map(dnsRecordMessage),
    lastCheckedAt: optionalTimestamp(view.lastCheckedAt),
    verifiedAt: optionalTimestamp(view.verifiedAt),
    createdAt: optionalTimestamp(view.createdAt),
  });
}

export function senderMessage(view: SenderView): Sender {
  return create(SenderSchema, {
    id: view.id,
    domainId: view.domainId,
    email: view.email,
    name: view.name ?? undefined,
    isDefault: view.isDefault,
    verified: view.verified,
    createdAt: optionalTimestamp(view.createdAt),
  });
}

export function createDomainCommand(req: CreateDomainRequest, ctx: HandlerContext): CreateSendingDomainCommand {
  return { companyId: callerOf(ctx).companyId, domain: req.domain, audit: auditContextOf(ctx) };
}

export function listDomainsCommand(ctx: HandlerContext): ListSendingDomainsCommand {
  return { companyId: callerOf(ctx).companyId };
}

export function domainQuery(req: GetDomainRequest, ctx: HandlerContext): SendingDomainCommand {
  return { companyId: callerOf(ctx).companyId, domainId: req.id };
}

export function checkDomainCommand(req: CheckDomainRequest, ctx: HandlerContext): CheckSendingDomainCommand {
  return { companyId: callerOf(ctx).companyId, domainId: req.id, audit: auditContextOf(ctx) };
}

export function deleteDomainCommand(req: DeleteDomainRequest, ctx: HandlerContext): DeleteSendingDomainCommand {
  return { companyId: callerOf(ctx).companyId, domainId: req.id, audit: auditContextOf(ctx) };
}

export function createSenderCommand(req: CreateSenderRequest, ctx: HandlerContext): CreateSenderCommand {
  return { companyId: callerOf(ctx).companyId, email: req.email, name: req.name ?? null, makeDefault: req.makeDefault, audit: auditContextOf(ctx) };
}

export function listSendersCommand(ctx: HandlerContext): ListSendersCommand {
  return { companyId: callerOf(ctx).companyId };
}

export function setDefaultSenderCommand(req: SetDefaultSenderRequest, ctx: HandlerContext): SetDefaultSenderCommand {
  return { companyId: callerOf(ctx).companyId, senderId: req.id, audit: auditContextOf(ctx) };
}

export function removeSenderCommand(req: DeleteSenderRequest, ctx: HandlerContext): RemoveSenderCommand {
  return { companyId: callerOf(ctx).companyId, senderId: req.id, audit: auditContextOf(ctx) };
}
