/**
 * Sender addresses, always per company (the rule at the top of
 * api-key-repository.ts). Senders are loaded with their domain: whether a
 * sender may send depends on it.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { SenderSchema, type Company, type Sender, type SendingDomain } from "../entities/index.ts";
import { isUuid } from "./ids.ts";

export interface NewSender {
  readonly email: string;
  readonly name: string | null;
  readonly isDefault: boolean;
}

/** Works on the EntityManager it is given; the caller flushes. */
export class SenderRepository {
  readonly #em: EntityManager;

  constructor(em: EntityManager) {
    this.#em = em;
  }

  /** The senders of one company, oldest first, with their domains. */
  async listForCompany(companyId: string): Promise<Sender[]> {
    if (!isUuid(companyId)) return [];
    return this.#em.find(SenderSchema, { company: companyId }, { populate: ["domain"], orderBy: { createdAt: "asc", id: "asc" } });
  }

  /** One sender of one company; null when it is not that company's. */
  async findForCompany(companyId: string, senderId: string): Promise<Sender | null> {
    if (!isUuid(companyId) || !isUuid(senderId)) return null;
    return this.#em.findOne(SenderSchema, { id: senderId, company: companyId }, { populate: ["domain"] });
  }

  /** The company's default sender, if it has one. */
  async findDefaultForCompany(companyId: string): Promise<Sender | null> {
    if (!isUuid(companyId)) return null;
    return this.#em.findOne(SenderSchema, { company: companyId, isDefault: true }, { populate: ["domain"] });
  }

  /**
   * Serialises changes of a company's default sender until the end of the
   * current transaction (only inside one). A transaction-scoped advisory
   * lock rather than a row lock: there may be no sender row yet to lock, and
   * locking the company row would also hold up unrelated writes of it.
   */
  async lockDefaultForCompany(companyId: string): Promise<void> {
    await this.#em.execute(`select pg_advisory_xact_lock(hashtextextended('sender-default:' || ?, 0))`, [companyId]);
  }

  /** Clears the default flag of every sender of the company (runs at once, before the flush). */
  async clearDefaultForCompany(companyId: string): Promise<void> {
    await this.#em.nativeUpdate(SenderSchema, { company: companyId, isDefault: true }, { isDefault: false });
  }

  /** Persists a new sender of `company` on `domain` (written by the next flush). */
  createForCompany(company: Company, domain: SendingDomain, data: NewSender): Sender {
    return this.#em.create(SenderSchema, { ...data, company, domain });
  }
}
