/**
 * Sending domains through MikroORM, always per company: every read filters
 * on the caller's companyId. Each method works on its own EntityManager
 * fork: no identity map is shared across calls.
 */
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type {
  DomainRemoval,
  DomainVerification,
  NewSendingDomain,
  SendingDomainRecord,
  SendingDomainStore,
} from "../../../capabilities/sending-setup/ports.ts";
import { CompanySchema, SenderSchema, SendingDomainSchema, type SendingDomain } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { sendingDomainRecord } from "./records.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";

export class PostgresSendingDomainStore implements SendingDomainStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async add(companyId: string, domain: NewSendingDomain, audit?: AuditNote): Promise<SendingDomainRecord | null> {
    try {
      return await this.#em().transactional(async (em) => {
        const created = em.create(SendingDomainSchema, { ...domain, company: em.getReference(CompanySchema, companyId) });
        await em.flush();
        // The audit row in the same transaction (the id exists once flushed).
        if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "sending_domain", targetId: created.id });
        await em.flush();
        return sendingDomainRecord(created);
      });
    } catch (error: unknown) {
      // The company has that domain already (a concurrent add won the race).
      if (error instanceof UniqueConstraintViolationException) return null;
      throw error;
    }
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

  async recordVerification(companyId: string, domainId: string, verification: DomainVerification, audit?: AuditNote): Promise<SendingDomainRecord | null> {
    const em = this.#em();
    const domain = await findForCompany(em, companyId, domainId);
    if (!domain) return null;
    // Persisted by the same flush (one transaction).
    if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "sending_domain", targetId: domainId });
    if (verification.kind === "overridden") {
      domain.verificationOverridden = true;
      domain.verifiedAt ??= verification.at;
    } else {
      const { report } = verification;
      domain.dkimVerified = report.dkim;
      domain.spfVerified = report.spf;
      domain.dmarcVerified = report.dmarc;
      domain.dnsCheck = [...report.records];
      domain.lastCheckedAt = verification.at;
      // Verified once stays sendable (a later loss makes it degraded, not pending).
      if (report.dkim && report.spf && report.dmarc) domain.verifiedAt ??= verification.at;
    }
    await em.flush();
    return sendingDomainRecord(domain);
  }

  async remove(companyId: string, domainId: string, audit?: AuditNote): Promise<DomainRemoval> {
    return this.#em().transactional(async (em) => {
      // The senders' lock: a sender being added to this domain meanwhile is seen.
      await em.execute(`select pg_advisory_xact_lock(hashtextextended('sender-default:' || ?, 0))`, [companyId]);
      const domain = await findForCompany(em, companyId, domainId);
      if (!domain) return "not_found";
      if ((await em.count(SenderSchema, { company: companyId, domain: domainId })) > 0) return "has_senders";
      if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "sending_domain", targetId: domainId });
      em.remove(domain);
      await em.flush();
      return "removed";
    });
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
