import type { AuditContext } from "../audit/types.ts";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { sanitizeEmailHtml } from "../messages/compose/sanitize-html.ts";
import { renderMessageContent, templateVariableNames } from "../messages/compose/template.ts";
import { hasNul } from "../messages/compose/text-rules.ts";
import { validVariables } from "../messages/compose/validate-send.ts";
import type { JsonObject } from "../shared/json.ts";
import { requireCompany } from "./company.ts";
import type { CompanyDirectory, TemplateRecord, TemplateStore } from "./ports.ts";
import type { StoredTemplate, TemplateLookup } from "./types.ts";
import { validTemplate, type TemplateInput } from "./validation.ts";
import { templateVersionView, templateView, type TemplateVersionView, type TemplateView } from "./views.ts";

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

/** `templateId`: the template's id or its name, as a send's `templateId`. */
export interface TemplateCommand {
  readonly companyId: string;
  readonly templateId: string;
}

export interface DeleteTemplateCommand extends TemplateCommand {
  readonly audit: AuditContext;
}

export interface RestoreTemplateVersionCommand extends TemplateCommand {
  readonly version: number;
  readonly audit: AuditContext;
}

/** A stored template (`templateId`), or unsaved content (`html`, with `subject` and `text`). */
export interface PreviewTemplateCommand {
  readonly companyId: string;
  readonly templateId?: string | undefined;
  readonly subject?: string | undefined;
  readonly html?: string | undefined;
  readonly text?: string | undefined;
  readonly variables?: JsonObject | undefined;
}

/** A template rendered as a send would render it. */
export interface TemplatePreview {
  readonly subject: string;
  /** Sanitised, as a recipient would get it. */
  readonly html: string;
  readonly text: string | null;
  /** The variables the template uses, in order of first use. */
  readonly variables: readonly string[];
}

/**
 * Templates of companies: reads, changes with their kept versions,
 * previews (administration), and the lookup of the send path
 * (`getTemplate`: the messages capability's TemplateLookup port, in its
 * shape). Every command names the company.
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

  async get(command: TemplateCommand): Promise<TemplateView> {
    return templateView(await this.#find(command));
  }

  async delete(command: DeleteTemplateCommand): Promise<void> {
    const template = await this.#find(command);
    const deleted = await this.#options.store.delete(template.companyId, template.id, {
      context: command.audit,
      action: "template.deleted",
      details: { name: template.name },
    });
    if (!deleted) throw notFound(command.templateId);
  }

  /** The kept versions, newest first. */
  async versions(command: TemplateCommand): Promise<TemplateVersionView[]> {
    const template = await this.#find(command);
    return (await this.#options.store.versions(template.companyId, template.id)).map(templateVersionView);
  }

  /** A kept version's content as the template's new version. */
  async restore(command: RestoreTemplateVersionCommand): Promise<TemplateView> {
    if (!Number.isSafeInteger(command.version) || command.version < 1) {
      throw new ValidationError([{ field: "version", problem: "must be a version number (1 or more)" }]);
    }
    const template = await this.#find(command);
    const restored = await this.#options.store.restore(template.companyId, template.id, command.version, {
      context: command.audit,
      action: "template.restored",
      details: { name: template.name },
    });
    if (!restored) throw new ApiError("NOT_FOUND", `version ${command.version} of template "${template.name}" is not kept.`);
    return templateView(restored);
  }

  /**
   * Renders with the send's own steps (renderMessageContent, then
   * sanitizeEmailHtml), so the preview is what a send with these variables
   * would store. Nothing is stored.
   */
  async preview(command: PreviewTemplateCommand): Promise<TemplatePreview> {
    const variables = validVariables(command.variables);
    const content = command.templateId === undefined ? draftContent(command) : await this.#find({ companyId: command.companyId, templateId: command.templateId });
    if (command.templateId === undefined) await requireCompany(this.#options.companies, command.companyId);
    const text = content.text ?? undefined;
    const rendered = renderMessageContent({ subject: content.subject, html: content.html, text }, variables);
    return {
      subject: rendered.subject,
      html: sanitizeEmailHtml(rendered.html),
      text: rendered.text ?? null,
      variables: templateVariableNames(content.subject, content.html, content.text ?? ""),
    };
  }

  async getTemplate(companyId: string, templateIdOrName: string): Promise<StoredTemplate> {
    const template = await this.#find({ companyId, templateId: templateIdOrName });
    return {
      id: template.id,
      name: template.name,
      subject: template.subject,
      html: template.html,
      ...(template.text ? { text: template.text } : {}),
    };
  }

  async #find(command: TemplateCommand): Promise<TemplateRecord> {
    const { store } = this.#options;
    const key = command.templateId.trim();
    // By id first (a key that cannot be an id finds nothing); a name may
    // look like an id too, so fall back to the name.
    const template = key === "" ? null : ((await store.find(command.companyId, key)) ?? (await store.findByName(command.companyId, key)));
    if (!template) throw notFound(command.templateId);
    return template;
  }
}

function notFound(templateId: string): ApiError {
  return new ApiError("NOT_FOUND", `templateId "${templateId}" does not name a template of this company.`);
}

/** Unsaved content: only what rendering needs is required (an editor previews a draft before it has a subject). */
function draftContent(command: PreviewTemplateCommand): { subject: string; html: string; text: string | null } {
  const problems: { field: string; problem: string }[] = [];
  if (command.html === undefined) problems.push({ field: "html", problem: "is required when templateId is not given" });
  for (const field of ["subject", "html", "text"] as const) {
    const value = command[field];
    if (value !== undefined && hasNul(value)) problems.push({ field, problem: "must not contain NUL characters" });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return { subject: command.subject ?? "", html: command.html ?? "", text: command.text === undefined || command.text === "" ? null : command.text };
}
