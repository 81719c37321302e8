/**
 * Sending domains, always per company: every read takes the caller's
 * companyId and filters on it (the rule at the top of api-key-repository.ts).
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { SendingDomainSchema, type Company, type SendingDomain } from "../entities/index.ts";
import { isUuid } from "./ids.ts";

export interface NewSendingDomain {
  readonly domain: string;
  readonly returnPathDomain: string;
  readonly dkimSelector: string;
  readonly dkimPublicKey: string;
  readonly dkimPrivateKeySealed: string;
}

/** Works on the EntityManager it is given; the caller flushes. */
export class SendingDomainRepository {
  readonly #em: EntityManager;

  constructor(em: EntityManager) {
    this.#em = em;
  }

  /** The domains of one company, oldest first. */
  async listForCompany(companyId: string): Promise<SendingDomain[]> {
    if (!isUuid(companyId)) return [];
    return this.#em.find(SendingDomainSchema, { company: companyId }, { orderBy: { createdAt: "asc", id: "asc" } });
  }

  /** One domain of one company by id; null when it is not that company's. */
  async findForCompany(companyId: string, domainId: string): Promise<SendingDomain | null> {
    if (!isUuid(companyId) || !isUuid(domainId)) return null;
    return this.#em.findOne(SendingDomainSchema, { id: domainId, company: companyId });
  }

  /** One domain of one company by its (normalised) name. */
  async findByNameForCompany(companyId: string, domain: string): Promise<SendingDomain | null> {
    if (!isUuid(companyId)) return null;
    return this.#em.findOne(SendingDomainSchema, { company: companyId, domain });
  }

  /** Persists a new domain of `company` (written by the next flush). */
  createForCompany(company: Company, data: NewSendingDomain): SendingDomain {
    return this.#em.create(SendingDomainSchema, { ...data, company });
  }
}
