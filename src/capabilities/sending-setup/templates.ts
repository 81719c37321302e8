import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { ApiError } from "../../contract/api-error.ts";
import type { Template } from "../../adapters/postgres/entities/index.ts";
import { isUuid } from "../../adapters/postgres/repositories/ids.ts";
import { TemplateRepository } from "../../adapters/postgres/repositories/template-repository.ts";
import { requireCompany } from "./company.ts";
import type { StoredTemplate, TemplateStore } from "./types.ts";
import { validTemplate, type TemplateInput } from "./validation.ts";
import { templateView, type TemplateView } from "./views.ts";

export interface TemplateServiceOptions {
  readonly orm: MikroORM;
}

/**
 * Templates of companies: put and list (administration), and the lookup of
 * the send path. Every method takes the company id first.
 */
export class TemplateService implements TemplateStore {
  readonly #options: TemplateServiceOptions;

  constructor(options: TemplateServiceOptions) {
    this.#options = options;
  }

  /** Creates the template of that name, or replaces its subject and bodies (same id). */
  async putTemplate(companyId: string, input: TemplateInput): Promise<TemplateView> {
    const content = validTemplate(input);
    const em = this.#em();
    const company = await requireCompany(em, companyId);
    return templateView(await new TemplateRepository(em).putForCompany(company, content));
  }

  /** The company's templates, by name. */
  async listTemplates(companyId: string): Promise<TemplateView[]> {
    const em = this.#em();
    await requireCompany(em, companyId);
    return (await new TemplateRepository(em).listForCompany(companyId)).map(templateView);
  }

  async getTemplate(companyId: string, templateIdOrName: string): Promise<StoredTemplate> {
    const templates = new TemplateRepository(this.#em());
    const key = templateIdOrName.trim();
    let template: Template | null = null;
    if (isUuid(key)) template = await templates.findForCompany(companyId, key);
    // A name may look like a UUID too: fall back to the name.
    template ??= key === "" ? null : await templates.findByNameForCompany(companyId, key);
    if (!template) throw new ApiError("NOT_FOUND", `templateId "${templateIdOrName}" does not name a template of this company.`);
    return {
      id: template.id,
      name: template.name,
      subject: template.subject,
      html: template.html,
      ...(template.text ? { text: template.text } : {}),
    };
  }

  /** A fresh EntityManager per operation: no identity map shared across calls. */
  #em(): EntityManager {
    return this.#options.orm.em.fork();
  }
}
