import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { SendingSetup, TemplateView } from "../../../capabilities/sending-setup/index.ts";
import { type Template, TemplateSchema, TemplatesService } from "../../../gen/mail/v1/templates_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/** A template as the contract has it. */
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

/**
 * The company's TemplatesService: API keys with mail.admin, owner/admin
 * sessions and operators acting for the company. The company and the actor
 * come from the principal, never from the request.
 */
export function templatesServiceImpl(templates: SendingSetup["templates"]): ServiceImpl<typeof TemplatesService> {
  return {
    async putTemplate(req, ctx) {
      const template = await templates.putTemplate(
        callerOf(ctx).companyId,
        { name: req.name, subject: req.subject, html: req.html, text: req.text ?? null },
        auditContextOf(ctx),
      );
      return { template: templateMessage(template) };
    },
    async listTemplates(_req, ctx) {
      return { templates: (await templates.listTemplates(callerOf(ctx).companyId)).map(templateMessage) };
    },
  };
}
