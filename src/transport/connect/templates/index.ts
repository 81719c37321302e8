import type { ServiceImpl } from "@connectrpc/connect";
import type { Templates, TemplateTestSends } from "../../../capabilities/sending-setup/index.ts";
import type { TemplatesService } from "../../../gen/mail/v1/templates_pb.js";
import {
  deleteTemplateCommand,
  getTemplateResponse,
  listTemplatesCommand,
  listTemplatesResponse,
  previewTemplateCommand,
  previewTemplateResponse,
  putTemplateCommand,
  putTemplateResponse,
  restoreTemplateVersionCommand,
  restoreTemplateVersionResponse,
  sendTestTemplateCommand,
  sendTestTemplateResponse,
  templateCommand,
  templateVersionsResponse,
} from "./mapping.ts";

export interface TemplatesServiceDependencies {
  readonly templates: Templates;
  readonly testSends: TemplateTestSends;
}

/**
 * The company's TemplatesService: API keys (reads with mail.events.read,
 * changes with mail.admin), member sessions by role, and operators acting
 * for the company.
 */
export function templatesServiceImpl({ templates, testSends }: TemplatesServiceDependencies): ServiceImpl<typeof TemplatesService> {
  return {
    async putTemplate(req, ctx) {
      return putTemplateResponse(await templates.put(putTemplateCommand(req, ctx)));
    },
    async listTemplates(_req, ctx) {
      return listTemplatesResponse(await templates.list(listTemplatesCommand(ctx)));
    },
    async getTemplate(req, ctx) {
      return getTemplateResponse(await templates.get(templateCommand(req, ctx)));
    },
    async deleteTemplate(req, ctx) {
      await templates.delete(deleteTemplateCommand(req, ctx));
      return {};
    },
    async listTemplateVersions(req, ctx) {
      return templateVersionsResponse(await templates.versions(templateCommand(req, ctx)));
    },
    async restoreTemplateVersion(req, ctx) {
      return restoreTemplateVersionResponse(await templates.restore(restoreTemplateVersionCommand(req, ctx)));
    },
    async previewTemplate(req, ctx) {
      return previewTemplateResponse(await templates.preview(previewTemplateCommand(req, ctx)));
    },
    async sendTestTemplate(req, ctx) {
      return sendTestTemplateResponse(await testSends.send(sendTestTemplateCommand(req, ctx)));
    },
  };
}
