import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { ValidationError, type FieldProblem } from "../../../contract/api-error.ts";
import type { CompanyView, CreateCompanyCommand, GetCompanyCommand, SetEntitlementsCommand } from "../../../capabilities/accounts/index.ts";
import { type AdjustCreditsCommand, MAX_ADJUSTMENT } from "../../../capabilities/credits/index.ts";
import type { SignInLinkCommand, SignInLinkResult } from "../../../capabilities/members/index.ts";
import type { ProviderEvent, ProviderEventType } from "../../../capabilities/messages/email-provider.ts";
import {
  type AdjustCreditsRequest,
  type Company,
  type CompanyEntitlements,
  CompanySchema,
  type CreateCompanyRequest,
  type CreateSignInLinkRequest,
  type CreateSignInLinkResponseSchema,
  type ReportProviderEventRequest,
  type SetEntitlementsRequest,
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
