import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteTemplateCommand,
  ListTemplatesCommand,
  PreviewTemplateCommand,
  PutTemplateCommand,
  RestoreTemplateVersionCommand,
  SendTestTemplateCommand,
  TemplateCommand,
  TemplatePreview,
  TemplateTestSent,
  TemplateVersionView,
  TemplateView,
} from "../../../capabilities/sending-setup/index.ts";
import {
  type DeleteTemplateRequest,
  type GetTemplateRequest,
  type GetTemplateResponseSchema,
  type ListTemplateVersionsRequest,
  type ListTemplateVersionsResponseSchema,
  type ListTemplatesResponseSchema,
  type PreviewTemplateRequest,
  type PreviewTemplateResponseSchema,
  type PutTemplateRequest,
  type PutTemplateResponseSchema,
  type RestoreTemplateVersionRequest,
  type RestoreTemplateVersionResponseSchema,
  type SendTestTemplateRequest,
  type SendTestTemplateResponseSchema,
  type Template,
  TemplateSchema,
  type TemplateVersion,
  TemplateVersionSchema,
} from "../../../gen/mail/v1/templates_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/**
 * The TemplatesService's proto <-> domain mapping, both directions. The
 * company and the actor come from the principal, never from the request.
 */

export function templateMessage(view: TemplateView): Template {
  return create(TemplateSchema, {
    id: view.id,
    companyId: view.companyId,
    name: view.name,
    subject: view.subject,
    html: view.html,
    text: view.text ?? undefined,
    version: view.version,
    createdAt: optionalTimestamp(view.createdAt),
    updatedAt: optionalTimestamp(view.updatedAt),
  });
}

function templateVersionMessage(view: TemplateVersionView): TemplateVersion {
  return create(TemplateVersionSchema, {
    version: view.version,
    name: view.name,
    subject: view.subject,
    html: view.html,
    text: view.text ?? undefined,
    createdBy: view.createdBy,
    createdAt: optionalTimestamp(view.createdAt),
    restoredFrom: view.restoredFrom ?? undefined,
  });
}

export function putTemplateCommand(req: PutTemplateRequest, ctx: HandlerContext): PutTemplateCommand {
  return { companyId: callerOf(ctx).companyId, name: req.name, subject: req.subject, html: req.html, text: req.text ?? null, audit: auditContextOf(ctx) };
}

export function putTemplateResponse(template: TemplateView): MessageInitShape<typeof PutTemplateResponseSchema> {
  return { template: templateMessage(template) };
}

export function listTemplatesCommand(ctx: HandlerContext): ListTemplatesCommand {
  return { companyId: callerOf(ctx).companyId };
}

export function listTemplatesResponse(templates: readonly TemplateView[]): MessageInitShape<typeof ListTemplatesResponseSchema> {
  return { templates: templates.map(templateMessage) };
}

export function templateCommand(req: GetTemplateRequest | ListTemplateVersionsRequest, ctx: HandlerContext): TemplateCommand {
  return { companyId: callerOf(ctx).companyId, templateId: "name" in req ? req.name : req.templateId };
}

export function getTemplateResponse(template: TemplateView): MessageInitShape<typeof GetTemplateResponseSchema> {
  return { template: templateMessage(template) };
}

export function deleteTemplateCommand(req: DeleteTemplateRequest, ctx: HandlerContext): DeleteTemplateCommand {
  return { companyId: callerOf(ctx).companyId, templateId: req.name, audit: auditContextOf(ctx) };
}

export function templateVersionsResponse(versions: readonly TemplateVersionView[]): MessageInitShape<typeof ListTemplateVersionsResponseSchema> {
  return { versions: versions.map(templateVersionMessage) };
}

export function restoreTemplateVersionCommand(req: RestoreTemplateVersionRequest, ctx: HandlerContext): RestoreTemplateVersionCommand {
  return { companyId: callerOf(ctx).companyId, templateId: req.templateId, version: req.version, audit: auditContextOf(ctx) };
}

export function restoreTemplateVersionResponse(template: TemplateView): MessageInitShape<typeof RestoreTemplateVersionResponseSchema> {
  return { template: templateMessage(template) };
}

export function previewTemplateCommand(req: PreviewTemplateRequest, ctx: HandlerContext): PreviewTemplateCommand {
  return {
    companyId: callerOf(ctx).companyId,
    templateId: req.templateId,
    subject: req.subject,
    html: req.html,
    text: req.text,
    variables: req.variables,
  };
}

export function previewTemplateResponse(preview: TemplatePreview): MessageInitShape<typeof PreviewTemplateResponseSchema> {
  return { subject: preview.subject, html: preview.html, text: preview.text ?? undefined, variables: [...preview.variables] };
}

/** Only a member session has an address of its own; the use case refuses the others. */
export function sendTestTemplateCommand(req: SendTestTemplateRequest, ctx: HandlerContext): SendTestTemplateCommand {
  const { actor, companyId } = callerOf(ctx);
  return {
    companyId,
    templateId: req.templateId,
    variables: req.variables,
    requester: actor.kind === "member" ? { kind: "member", memberId: actor.memberId, email: actor.email } : { kind: "other" },
    audit: auditContextOf(ctx),
  };
}

export function sendTestTemplateResponse(sent: TemplateTestSent): MessageInitShape<typeof SendTestTemplateResponseSchema> {
  return { messageId: sent.messageId, to: sent.to };
}
