/**
 * Templates through MikroORM, always per company: every read filters on the
 * caller's companyId. Each method works on its own EntityManager fork.
 */
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { TemplateContent, TemplateRecord, TemplateStore } from "../../../capabilities/sending-setup/ports.ts";
import { CompanySchema, TemplateSchema } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { templateRecord } from "./records.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";

export class PostgresTemplateStore implements TemplateStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async list(companyId: string): Promise<TemplateRecord[]> {
    if (!isUuid(companyId)) return [];
    const templates = await this.#em().find(TemplateSchema, { company: companyId }, { orderBy: { name: "asc" } });
    return templates.map(templateRecord);
  }

  async find(companyId: string, templateId: string): Promise<TemplateRecord | null> {
    if (!isUuid(companyId) || !isUuid(templateId)) return null;
    const template = await this.#em().findOne(TemplateSchema, { id: templateId, company: companyId });
    return template ? templateRecord(template) : null;
  }

  async findByName(companyId: string, name: string): Promise<TemplateRecord | null> {
    if (!isUuid(companyId)) return null;
    const template = await this.#em().findOne(TemplateSchema, { company: companyId, name });
    return template ? templateRecord(template) : null;
  }

  /** One statement (INSERT ... ON CONFLICT): two concurrent puts of a new name cannot both try to create it. */
  async put(companyId: string, content: TemplateContent, audit?: AuditNote): Promise<TemplateRecord> {
    return this.#em().transactional(async (em) => {
      const now = new Date();
      const template = await em.upsert(
        TemplateSchema,
        { ...content, company: em.getReference(CompanySchema, companyId), createdAt: now, updatedAt: now },
        { onConflictFields: ["company", "name"], onConflictMergeFields: ["subject", "html", "text", "updatedAt"] },
      );
      // The audit row in the same transaction.
      if (audit) {
        persistAuditRow(em, companyId, { ...audit, targetType: "template", targetId: template.id });
        await em.flush();
      }
      return templateRecord(template);
    });
  }

  /** A fresh EntityManager per operation. */
  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}
