/**
 * Sending domains through MikroORM, always per company: every read filters
 * on the caller's companyId. Each method works on its own EntityManager
 * fork: no identity map is shared across calls.
 */
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type {
  DomainVerification,
  NewSendingDomain,
  SendingDomainRecord,
  SendingDomainStore,
} from "../../../capabilities/sending-setup/ports.ts";
import { CompanySchema, SendingDomainSchema, type SendingDomain } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { sendingDomainRecord } from "./records.ts";

export class PostgresSendingDomainStore implements SendingDomainStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async add(companyId: string, domain: NewSendingDomain): Promise<SendingDomainRecord | null> {
    const em = this.#em();
    const created = em.create(SendingDomainSchema, { ...domain, company: em.getReference(CompanySchema, companyId) });
    try {
      await em.flush();
    } catch (error: unknown) {
      // The company has that domain already (a concurrent add won the race).
      if (error instanceof UniqueConstraintViolationException) return null;
      throw error;
    }
    return sendingDomainRecord(created);
  }

  async find(companyId: string, domainId: string): Promise<SendingDomainRecord | null> {
    const domain = await findForCompany(this.#em(), companyId, domainId);
    return domain ? sendingDomainRecord(domain) : null;
  }

  async findByName(companyId: string, domain: string): Promise<SendingDomainRecord | null> {
    if (!isUuid(companyId)) return null;
    const found = await this.#em().findOne(SendingDomainSchema, { company: companyId, domain });
    return found ? sendingDomainRecord(found) : null;
  }

  async list(companyId: string): Promise<SendingDomainRecord[]> {
    if (!isUuid(companyId)) return [];
    const domains = await this.#em().find(SendingDomainSchema, { company: companyId }, { orderBy: { createdAt: "asc", id: "asc" } });
    return domains.map(sendingDomainRecord);
  }

  async recordVerification(companyId: string, domainId: string, verification: DomainVerification): Promise<SendingDomainRecord | null> {
    const em = this.#em();
    const domain = await findForCompany(em, companyId, domainId);
    if (!domain) return null;
    if (verification.kind === "overridden") {
      domain.verificationOverridden = true;
    } else {
      domain.dkimVerified = verification.state.dkim;
      domain.spfVerified = verification.state.spf;
      domain.dmarcVerified = verification.state.dmarc;
      domain.lastCheckedAt = verification.at;
    }
    await em.flush();
    return sendingDomainRecord(domain);
  }

  /** A fresh EntityManager per operation. */
  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}

/** One domain of one company by id; null when it is not that company's. */
export async function findForCompany(em: EntityManager, companyId: string, domainId: string): Promise<SendingDomain | null> {
  if (!isUuid(companyId) || !isUuid(domainId)) return null;
  return em.findOne(SendingDomainSchema, { id: domainId, company: companyId });
}
