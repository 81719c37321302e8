/**
 * Templates, always per company (the rule at the top of
 * api-key-repository.ts).
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { TemplateSchema, type Company, type Template } from "../entities/index.ts";
import { isUuid } from "./ids.ts";

export interface TemplateContent {
  readonly name: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string | null;
}

/** Works on the EntityManager it is given. */
export class TemplateRepository {
  readonly #em: EntityManager;

  constructor(em: EntityManager) {
    this.#em = em;
  }

  /** The templates of one company, by name. */
  async listForCompany(companyId: string): Promise<Template[]> {
    if (!isUuid(companyId)) return [];
    return this.#em.find(TemplateSchema, { company: companyId }, { orderBy: { name: "asc" } });
  }

  async findForCompany(companyId: string, templateId: string): Promise<Template | null> {
    if (!isUuid(companyId) || !isUuid(templateId)) return null;
    return this.#em.findOne(TemplateSchema, { id: templateId, company: companyId });
  }

  async findByNameForCompany(companyId: string, name: string): Promise<Template | null> {
    if (!isUuid(companyId)) return null;
    return this.#em.findOne(TemplateSchema, { company: companyId, name });
  }

  /**
   * Creates the company's template of that name or replaces its content, in
   * one statement (INSERT ... ON CONFLICT): two concurrent puts of a new name
   * cannot both try to create it. A replaced template keeps its id and
   * createdAt.
   */
  async putForCompany(company: Company, content: TemplateContent): Promise<Template> {
    const now = new Date();
    return this.#em.upsert(
      TemplateSchema,
      { ...content, company, createdAt: now, updatedAt: now },
      { onConflictFields: ["company", "name"], onConflictMergeFields: ["subject", "html", "text", "updatedAt"] },
    );
  }
}
