/**
 * Sender addresses through MikroORM, always per company: every read
 * filters on the caller's companyId. Senders are loaded with their domain:
 * whether a sender may send depends on it. Each method works on its own
 * EntityManager fork.
 */
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { SenderDraft, SenderRecord, SenderStore } from "../../../capabilities/sending-setup/ports.ts";
import { CompanySchema, SenderSchema, type Sender } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { findForCompany as findDomainForCompany } from "./postgres-sending-domain-store.ts";
import { senderRecord } from "./records.ts";

export class PostgresSenderStore implements SenderStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async list(companyId: string): Promise<SenderRecord[]> {
    return (await listForCompany(this.#em(), companyId)).map(senderRecord);
  }

  async find(companyId: string, senderId: string): Promise<SenderRecord | null> {
    const sender = await findForCompany(this.#em(), companyId, senderId);
    return sender ? senderRecord(sender) : null;
  }

  async findDefault(companyId: string): Promise<SenderRecord | null> {
    if (!isUuid(companyId)) return null;
    const sender = await this.#em().findOne(SenderSchema, { company: companyId, isDefault: true }, { populate: ["domain"] });
    return sender ? senderRecord(sender) : null;
  }

  async add(companyId: string, domainId: string, plan: (senders: readonly SenderRecord[]) => SenderDraft): Promise<SenderRecord> {
    return this.#em().transactional(async (em) => {
      await lockDefault(em, companyId);
      const draft = plan((await listForCompany(em, companyId)).map(senderRecord));
      const domain = await findDomainForCompany(em, companyId, domainId);
      if (!domain) throw new Error(`sending domain ${domainId} of company ${companyId} is gone`);
      if (draft.isDefault) await clearDefault(em, companyId);
      const sender = em.create(SenderSchema, { ...draft, company: em.getReference(CompanySchema, companyId), domain });
      await em.flush();
      return senderRecord(sender);
    });
  }

  async makeDefault(companyId: string, senderId: string): Promise<SenderRecord | null> {
    return this.#em().transactional(async (em) => {
      await lockDefault(em, companyId);
      const sender = await findForCompany(em, companyId, senderId);
      if (!sender) return null;
      if (!sender.isDefault) {
        await clearDefault(em, companyId);
        sender.isDefault = true;
        await em.flush();
      }
      return senderRecord(sender);
    });
  }

  /** A fresh EntityManager per operation. */
  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}

/** The senders of one company, oldest first, with their domains. */
async function listForCompany(em: EntityManager, companyId: string): Promise<Sender[]> {
  if (!isUuid(companyId)) return [];
  return em.find(SenderSchema, { company: companyId }, { populate: ["domain"], orderBy: { createdAt: "asc", id: "asc" } });
}

/** One sender of one company; null when it is not that company's. */
async function findForCompany(em: EntityManager, companyId: string, senderId: string): Promise<Sender | null> {
  if (!isUuid(companyId) || !isUuid(senderId)) return null;
  return em.findOne(SenderSchema, { id: senderId, company: companyId }, { populate: ["domain"] });
}

/**
 * Serialises changes of a company's default sender until the end of the
 * current transaction (only inside one). A transaction-scoped advisory lock
 * rather than a row lock: there may be no sender row yet to lock, and
 * locking the company row would also hold up unrelated writes of it.
 */
async function lockDefault(em: EntityManager, companyId: string): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtextextended('sender-default:' || ?, 0))`, [companyId]);
}

/** Clears the default flag of every sender of the company (runs at once, before the flush). */
async function clearDefault(em: EntityManager, companyId: string): Promise<void> {
  await em.nativeUpdate(SenderSchema, { company: companyId, isDefault: true }, { isDefault: false });
}
