/**
 * Contact lists through MikroORM (simple CRUD), always per company: every
 * read and write filters on the caller's companyId. Each method works on its
 * own EntityManager fork. Memberships are written by the contact store
 * (postgres-contact-store.ts) and go with a deleted list (ON DELETE CASCADE).
 */
import { raw, UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { ContactListStore } from "../../../capabilities/contacts/ports.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";
import type { ContactListRecord } from "../../../capabilities/contacts/index.ts";
import { CompanySchema, ContactListMemberSchema, ContactListSchema, type ContactList } from "../entities/index.ts";
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
    return listRecord(list, 0);
  }

  async rename(companyId: string, id: string, name: string, audit?: AuditNote): Promise<ContactListRecord | "taken" | undefined> {
    const em = this.#em();
    const list = await findForCompany(em, companyId, id);
    if (!list) return undefined;
    if (list.name === name) return listRecord(list, await memberCount(em, companyId, id));
    list.name = name;
    list.updatedAt = new Date();
    if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "contact_list", targetId: id });
    try {
      await em.flush();
    } catch (error) {
      if (isNameTaken(error)) return "taken";
      throw error;
    }
    return listRecord(list, await memberCount(em, companyId, id));
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
    const em = this.#em();
    const lists = await em.find(ContactListSchema, { company: companyId }, { orderBy: { createdAt: "asc", id: "asc" } });
    const counts = await memberCounts(em, companyId);
    return lists.map((list) => listRecord(list, counts.get(list.id) ?? 0));
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

/**
 * Members per list of the company, in one grouped read of the primary key
 * (company_id, list_id, contact_id); a list without members is absent.
 */
async function memberCounts(em: EntityManager, companyId: string, listId?: string): Promise<Map<string, number>> {
  const rows = await em
    .createQueryBuilder(ContactListMemberSchema, "m")
    .select(["m.list", raw("count(*)::int as member_count")])
    .where(listId === undefined ? { company: companyId } : { company: companyId, list: listId })
    .groupBy("m.list")
    .execute<{ list_id: string; member_count: number }[]>("all", false);
  return new Map(rows.map((row) => [row.list_id, row.member_count]));
}

async function memberCount(em: EntityManager, companyId: string, listId: string): Promise<number> {
  return (await memberCounts(em, companyId, listId)).get(listId) ?? 0;
}

function listRecord(list: ContactList, memberCount: number): ContactListRecord {
  return { id: list.id, name: list.name, createdAt: list.createdAt, updatedAt: list.updatedAt, memberCount };
}
