import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { ValidationError, type FieldProblem } from "../../../contract/api-error.ts";
import type { CompanyView, CreateCompanyCommand, GetCompanyCommand, SetEntitlementsCommand } from "../../../capabilities/accounts/index.ts";
import { type AdjustCreditsCommand, MAX_ADJUSTMENT } from "../../../capabilities/credits/index.ts";
import type { SignInLinkCommand, SignInLinkResult } from "../../../capabilities/members/index.ts";
import type { ProviderEvent, ProviderEventType } from "../../../capabilities/messages/email-provider.ts";
import type {
  CreateSenderCommand,
  CreateSendingDomainCommand,
  ListSendersCommand,
  ListSendingDomainsCommand,
  SenderView,
  SendingDomainView,
  SetDefaultSenderCommand,
  VerifySendingDomainCommand,
} from "../../../capabilities/sending-setup/index.ts";
import {
  type AdjustCreditsRequest,
  type Company,
  type CompanyEntitlements,
  CompanySchema,
  type CreateCompanyRequest,
  type CreateSenderRequest,
  type CreateSendingDomainRequest,
  type CreateSignInLinkRequest,
  type CreateSignInLinkResponseSchema,
  DnsRecordSchema,
  type ListSendersRequest,
  type ListSendingDomainsRequest,
  type ReportProviderEventRequest,
  type Sender,
  SenderSchema,
  type SendingDomain,
  SendingDomainSchema,
  type SetDefaultSenderRequest,
  type SetEntitlementsRequest,
  type VerifySendingDomainRequest,
} from "../../../gen/mail/v1/admin_pb.js";
import { memberMessage } from "../members/mapping.ts";
import { operatorAuditOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/**
 * The AdminService's proto <-> domain mapping, both directions. Its calls
 * name the company in the request (`company_id`): the operator acts for any.
 */

// ---------------------------------------------------------------- companies

export function companyMessage(view: CompanyView): Company {
  return create(CompanySchema, {
    id: view.id,
    name: view.name,
    entitlements: { api: view.entitlements.api, smtp: view.entitlements.smtp },
    createdAt: optionalTimestamp(view.createdAt),
  });
}

/** The entitlements of a request as plain values (the domain refuses unknown keys). */
function entitlementsOf(message: CompanyEntitlements | undefined): { api?: boolean; smtp?: boolean } {
  return message ? { api: message.api, smtp: message.smtp } : {};
}

export function createCompanyCommand(req: CreateCompanyRequest): CreateCompanyCommand {
  return { name: req.name, entitlements: entitlementsOf(req.entitlements) };
}

export function setEntitlementsCommand(req: SetEntitlementsRequest): SetEntitlementsCommand {
  return { companyId: req.companyId, entitlements: entitlementsOf(req.entitlements) };
}

// ---------------------------------------------------------------- sign-in links

/** The company the link is for (it must exist: NOT_FOUND otherwise). */
export function signInLinkCompany(req: CreateSignInLinkRequest): GetCompanyCommand {
  return { companyId: req.companyId };
}

export function signInLinkCommand(req: CreateSignInLinkRequest, company: CompanyView, ctx: HandlerContext): SignInLinkCommand {
  return { companyId: company.id, email: req.email, acting: { audit: operatorAuditOf(ctx), role: undefined } };
}

export function signInLinkResponse(link: SignInLinkResult): MessageInitShape<typeof CreateSignInLinkResponseSchema> {
  return { member: memberMessage(link.member), signInUrl: link.signInUrl, expiresAt: optionalTimestamp(link.expiresAt) };
}

// ---------------------------------------------------------------- sending domains and senders

export function sendingDomainMessage(view: SendingDomainView): SendingDomain {
  return create(SendingDomainSchema, {
    id: view.id,
    companyId: view.companyId,
    domain: view.domain,
    returnPathDomain: view.returnPathDomain,
    dkimSelector: view.dkimSelector,
    dkimVerified: view.dkimVerified,
    spfVerified: view.spfVerified,
    dmarcVerified: view.dmarcVerified,
    verified: view.verified,
    verificationOverridden: view.verificationOverridden,
    dnsRecords: view.dnsRecords.map((record) => create(DnsRecordSchema, { ...record })),
    lastCheckedAt: optionalTimestamp(view.lastCheckedAt),
    createdAt: optionalTimestamp(view.createdAt),
  });
}

export function senderMessage(view: SenderView): Sender {
  return create(SenderSchema, {
    id: view.id,
    companyId: view.companyId,
    domainId: view.domainId,
    email: view.email,
    name: view.name ?? undefined,
    isDefault: view.isDefault,
    verified: view.verified,
    createdAt: optionalTimestamp(view.createdAt),
  });
}

export function createSendingDomainCommand(req: CreateSendingDomainRequest, ctx: HandlerContext): CreateSendingDomainCommand {
  return { companyId: req.companyId, domain: req.domain, audit: operatorAuditOf(ctx) };
}

export function verifySendingDomainCommand(req: VerifySendingDomainRequest, ctx: HandlerContext): VerifySendingDomainCommand {
  return { companyId: req.companyId, domainId: req.domainId, override: req.override, audit: operatorAuditOf(ctx) };
}

export function listSendingDomainsCommand(req: ListSendingDomainsRequest): ListSendingDomainsCommand {
  return { companyId: req.companyId };
}

export function createSenderCommand(req: CreateSenderRequest, ctx: HandlerContext): CreateSenderCommand {
  return { companyId: req.companyId, email: req.email, name: req.name ?? null, makeDefault: req.makeDefault, audit: operatorAuditOf(ctx) };
}

export function listSendersCommand(req: ListSendersRequest): ListSendersCommand {
  return { companyId: req.companyId };
}

export function setDefaultSenderCommand(req: SetDefaultSenderRequest, ctx: HandlerContext): SetDefaultSenderCommand {
  return { companyId: req.companyId, senderId: req.senderId, audit: operatorAuditOf(ctx) };
}

// ---------------------------------------------------------------- credits

export function adjustCreditsCommand(req: AdjustCreditsRequest): AdjustCreditsCommand {
  return { companyId: req.companyId, amount: amountOf(req.amount), note: req.note };
}

/** int64 on the wire, a safe integer in the domain: refuse what would lose precision. */
function amountOf(amount: bigint): number {
  if (amount > BigInt(MAX_ADJUSTMENT) || amount < -BigInt(MAX_ADJUSTMENT)) {
    throw new ValidationError([{ field: "amount", problem: `must be between -${MAX_ADJUSTMENT} and ${MAX_ADJUSTMENT}` }]);
  }
  return Number(amount);
}

// ---------------------------------------------------------------- provider events

const PROVIDER_EVENT_TYPES: ReadonlySet<string> = new Set<ProviderEventType>(["delivered", "bounced", "complained"]);

export function providerEventOf(req: ReportProviderEventRequest): ProviderEvent {
  const problems: FieldProblem[] = [];
  if (!req.providerEventId) problems.push({ field: "providerEventId", problem: "is required" });
  if (!req.providerMessageId) problems.push({ field: "providerMessageId", problem: "is required" });
  if (!PROVIDER_EVENT_TYPES.has(req.type)) problems.push({ field: "type", problem: "must be one of delivered, bounced, complained" });
  if (problems.length > 0) throw new ValidationError(problems);
  return {
    providerEventId: req.providerEventId,
    providerMessageId: req.providerMessageId,
    type: req.type as ProviderEventType,
    occurredAt: req.occurredAt ? timestampDate(req.occurredAt) : new Date(),
    ...(req.detail ? { detail: req.detail } : {}),
  };
}
