import type { AuditContext } from "../audit/types.ts";
import { ApiError } from "../../contract/api-error.ts";
import { requireCompany } from "./company.ts";
import type { CompanyDirectory, TemplateStore } from "./ports.ts";
import type { StoredTemplate, TemplateLookup } from "./types.ts";
import { validTemplate, type TemplateInput } from "./validation.ts";
import { templateView, type TemplateView } from "./views.ts";

export interface TemplatesDependencies {
  readonly companies: CompanyDirectory;
  readonly store: TemplateStore;
}

/** Creates the template of that name, or replaces its subject and bodies (same id). */
export interface PutTemplateCommand extends TemplateInput {
  readonly companyId: string;
  readonly audit: AuditContext;
}

export interface ListTemplatesCommand {
  readonly companyId: string;
}

/**
 * Templates of companies: put and list (administration), and the lookup of
 * the send path (`getTemplate`: the messages capability's TemplateLookup
 * port, in its shape). Every command names the company.
 */
export class Templates implements TemplateLookup {
  readonly #options: TemplatesDependencies;

  constructor(dependencies: TemplatesDependencies) {
    this.#options = dependencies;
  }

  async put(command: PutTemplateCommand): Promise<TemplateView> {
    const content = validTemplate(command);
    const company = await requireCompany(this.#options.companies, command.companyId);
    return templateView(await this.#options.store.put(company, content, { context: command.audit, action: "template.put", details: { name: content.name } }));
  }

  /** The company's templates, by name. */
  async list(command: ListTemplatesCommand): Promise<TemplateView[]> {
    const company = await requireCompany(this.#options.companies, command.companyId);
    return (await this.#options.store.list(company)).map(templateView);
  }

  async getTemplate(companyId: string, templateIdOrName: string): Promise<StoredTemplate> {
    const { store } = this.#options;
    const key = templateIdOrName.trim();
    // By id first (a key that cannot be an id finds nothing); a name may
    // look like an id too, so fall back to the name.
    const template = key === "" ? null : ((await store.find(companyId, key)) ?? (await store.findByName(companyId, key)));
    if (!template) throw new ApiError("NOT_FOUND", `templateId "${templateIdOrName}" does not name a template of this company.`);
    return {
      id: template.id,
      name: template.name,
      subject: template.subject,
      html: template.html,
      ...(template.text ? { text: template.text } : {}),
    };
  }
}
