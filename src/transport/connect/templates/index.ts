import type { ServiceImpl } from "@connectrpc/connect";
import type { Templates } from "../../../capabilities/sending-setup/index.ts";
import type { TemplatesService } from "../../../gen/mail/v1/templates_pb.js";
import { listTemplatesCommand, listTemplatesResponse, putTemplateCommand, putTemplateResponse } from "./mapping.ts";

/**
 * The company's TemplatesService: API keys with mail.admin, owner/admin
 * sessions and operators acting for the company.
 */
export function templatesServiceImpl(templates: Templates): ServiceImpl<typeof TemplatesService> {
  return {
    async putTemplate(req, ctx) {
      return putTemplateResponse(await templates.put(putTemplateCommand(req, ctx)));
    },
    async listTemplates(_req, ctx) {
      return listTemplatesResponse(await templates.list(listTemplatesCommand(ctx)));
    },
  };
}
