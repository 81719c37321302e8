import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { ListTemplatesCommand, PutTemplateCommand, TemplateView } from "../../../capabilities/sending-setup/index.ts";
import {
  type ListTemplatesResponseSchema,
  type PutTemplateRequest,
  type PutTemplateResponseSchema,
  type Template,
  TemplateSchema,
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
    createdAt: optionalTimestamp(view.createdAt),
    updatedAt: optionalTimestamp(view.updatedAt),
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
