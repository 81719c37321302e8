/**
 * Contact lists through MikroORM (simple CRUD), always per company: every
 * read and write filters on the caller's companyId. Each method works on its
 * own EntityManager fork. Memberships are written by the contact store
 * (postgres-contact-store.ts) and go with a deleted list (ON DELETE CASCADE).
 */
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { ContactListStore } from "../../../capabilities/contacts/ports.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";
import type { ContactListRecord } from "../../../capabilities/contacts/index.ts";
import { CompanySchema, ContactListSchema, type ContactList } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

/** The unique index on (company_id, lower(name)) (../migrations/Migration20251123010000_contacts.ts). */
function isNameTaken(error: unknown): boolean {
  return error instanceof UniqueConstraintViolationException;
}

export class PostgresContactListStore implements ContactListStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async create(companyId: string, id: string, name: string, audit?: AuditNote): Promise<ContactListRecord | "taken"> {
    const em = this.#em();
    const now = new Date();
    const list = em.create(ContactListSchema, { id, company: em.getReference(CompanySchema, companyId), name, createdAt: now, updatedAt: now });
    // Written by the same flush: one transaction.
    if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "contact_list", targetId: id });
    try {
      await em.flush();
    } catch (error) {
      if (isNameTaken(error)) return "taken";
      throw error;
    }
    return listRecord(list);
  }

  async rename(companyId: string, id: string, name: string, audit?: AuditNote): Promise<ContactListRecord | "taken" | undefined> {
    const em = this.#em();
    const list = await findForCompany(em, companyId, id);
    if (!list) return undefined;
    if (list.name === name) return listRecord(list);
    list.name = name;
    list.updatedAt = new Date();
    if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "contact_list", targetId: id });
    try {
      await em.flush();
    } catch (error) {
      if (isNameTaken(error)) return "taken";
      throw error;
    }
    return listRecord(list);
  }

  async delete(companyId: string, id: string, audit?: AuditNote): Promise<boolean> {
    if (!isUuid(companyId) || !isUuid(id)) return false;
    return this.#em().transactional(async (em) => {
      const deleted = (await em.nativeDelete(ContactListSchema, { id, company: companyId })) > 0;
      if (deleted && audit) {
        persistAuditRow(em, companyId, { ...audit, targetType: "contact_list", targetId: id });
        await em.flush();
      }
      return deleted;
    });
  }

  async list(companyId: string): Promise<ContactListRecord[]> {
    if (!isUuid(companyId)) return [];
    const lists = await this.#em().find(ContactListSchema, { company: companyId }, { orderBy: { createdAt: "asc", id: "asc" } });
    return lists.map(listRecord);
  }

  async exists(companyId: string, id: string): Promise<boolean> {
    return (await findForCompany(this.#em(), companyId, id)) !== null;
  }

  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}

async function findForCompany(em: EntityManager, companyId: string, id: string): Promise<ContactList | null> {
  if (!isUuid(companyId) || !isUuid(id)) return null;
  return em.findOne(ContactListSchema, { id, company: companyId });
}

function listRecord(list: ContactList): ContactListRecord {
  return { id: list.id, name: list.name, createdAt: list.createdAt, updatedAt: list.updatedAt };
}
