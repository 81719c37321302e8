/**
 * Templates and their kept versions through MikroORM, always per company:
 * every statement filters on the caller's companyId. Each method works on
 * its own EntityManager fork.
 */
import { LockMode } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import {
  KEPT_TEMPLATE_VERSIONS,
  type TemplateContent,
  type TemplateRecord,
  type TemplateStore,
  type TemplateVersionRecord,
} from "../../../capabilities/sending-setup/ports.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { CompanySchema, TemplateSchema, TemplateVersionSchema, type Template } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { templateRecord, templateVersionRecord } from "./records.ts";
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

  /**
   * One statement (INSERT ... ON CONFLICT) makes or replaces the row: two
   * concurrent puts of a new name cannot both try to create it, and the row
   * lock it takes orders the versions of concurrent puts of one template.
   */
  async put(companyId: string, content: TemplateContent, audit: AuditNote): Promise<TemplateRecord> {
    return this.#em().transactional(async (em) => {
      const now = new Date();
      const template = await em.upsert(
        TemplateSchema,
        { ...content, company: em.getReference(CompanySchema, companyId), createdAt: now, updatedAt: now },
        { onConflictFields: ["company", "name"], onConflictMergeFields: ["subject", "html", "text", "updatedAt"] },
      );
      return templateRecord(await addVersion(em, companyId, template, content, null, audit, "template.put"));
    });
  }

  async restore(companyId: string, templateId: string, version: number, audit: AuditNote): Promise<TemplateRecord | null> {
    if (!isUuid(companyId) || !isUuid(templateId)) return null;
    return this.#em().transactional(async (em) => {
      // The row lock orders this restore with concurrent puts of the template.
      const template = await em.findOne(TemplateSchema, { id: templateId, company: companyId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!template) return null;
      const kept = await em.findOne(TemplateVersionSchema, { template: templateId, company: companyId, version });
      if (!kept) return null;
      const content: TemplateContent = { name: template.name, subject: kept.subject, html: kept.html, text: kept.text ?? null };
      template.subject = content.subject;
      template.html = content.html;
      template.text = content.text;
      template.updatedAt = new Date();
      return templateRecord(await addVersion(em, companyId, template, content, version, audit, "template.restored"));
    });
  }

  async delete(companyId: string, templateId: string, audit: AuditNote): Promise<boolean> {
    if (!isUuid(companyId) || !isUuid(templateId)) return false;
    return this.#em().transactional(async (em) => {
      const template = await em.findOne(TemplateSchema, { id: templateId, company: companyId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!template) return false;
      // Its versions go with it (ON DELETE CASCADE).
      await em.nativeDelete(TemplateSchema, { id: templateId, company: companyId });
      persistAuditRow(em, companyId, { ...audit, targetType: "template", targetId: templateId });
      await em.flush();
      return true;
    });
  }

  async noteTestSend(companyId: string, templateId: string, audit: AuditNote): Promise<void> {
    const em = this.#em();
    persistAuditRow(em, companyId, { ...audit, targetType: "template", targetId: templateId });
    await em.flush();
  }

  async versions(companyId: string, templateId: string): Promise<TemplateVersionRecord[]> {
    if (!isUuid(companyId) || !isUuid(templateId)) return [];
    const versions = await this.#em().find(TemplateVersionSchema, { template: templateId, company: companyId }, { orderBy: { version: "desc" } });
    return versions.map(templateVersionRecord);
  }

  /** A fresh EntityManager per operation. */
  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}

/**
 * Records the template's new content as its next version, prunes the
 * versions beyond the kept number and writes the audit row, all on the
 * caller's transaction (which holds the template's row lock).
 */
async function addVersion(
  em: EntityManager,
  companyId: string,
  template: Template,
  content: TemplateContent,
  restoredFrom: number | null,
  audit: AuditNote,
  action: AuditNote["action"],
): Promise<Template> {
  const latest = await em.findOne(TemplateVersionSchema, { template: template.id, company: companyId }, { orderBy: { version: "desc" }, fields: ["version"] });
  const version = (latest?.version ?? 0) + 1;
  em.create(TemplateVersionSchema, {
    template: em.getReference(TemplateSchema, template.id),
    version,
    company: em.getReference(CompanySchema, companyId),
    ...content,
    createdBy: audit.context.actor.label,
    restoredFrom,
    createdAt: new Date(),
  });
  template.version = version;
  persistAuditRow(em, companyId, {
    ...audit,
    action,
    details: { ...audit.details, version, ...(restoredFrom === null ? {} : { restoredFrom }) },
    targetType: "template",
    targetId: template.id,
  });
  await em.flush();
  await em.nativeDelete(TemplateVersionSchema, { template: template.id, company: companyId, version: { $lte: version - KEPT_TEMPLATE_VERSIONS } });
  return template;
}
