/**
 * Sender addresses, always per company: every read filters on the caller's
 * companyId. Senders are loaded with their domain: whether a sender may
 * send depends on it. The two reads of the send path (find, findDefault:
 * every accepted send and every handoff) are plain SQL on the pool, one
 * joined statement each (through MikroORM they were about a fifth of the
 * API's CPU under load); listing and writes go through MikroORM, each
 * method on its own EntityManager fork.
 */
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { SenderDraft, SenderRecord, SenderStore } from "../../../capabilities/sending-setup/ports.ts";
import type { DnsRecordCheck } from "../../../capabilities/sending-setup/dns-records.ts";
import { CompanySchema, SenderSchema, type Sender } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { poolOf, toDate, type Pool } from "../sql.ts";
import { findForCompany as findDomainForCompany } from "./postgres-sending-domain-store.ts";
import { senderRecord } from "./records.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";

export class PostgresSenderStore implements SenderStore {
  readonly #orm: MikroORM;
  readonly #pool: () => Promise<Pool>;

  constructor(orm: MikroORM) {
    this.#orm = orm;
    this.#pool = poolOf(orm);
  }

  async list(companyId: string): Promise<SenderRecord[]> {
    return (await listForCompany(this.#em(), companyId)).map(senderRecord);
  }

  async find(companyId: string, senderId: string): Promise<SenderRecord | null> {
    if (!isUuid(companyId) || !isUuid(senderId)) return null;
    const { rows } = await (await this.#pool()).query<SenderRow>({ ...FIND, values: [companyId, senderId] });
    return rows[0] ? senderFromRow(rows[0]) : null;
  }

  async findDefault(companyId: string): Promise<SenderRecord | null> {
    if (!isUuid(companyId)) return null;
    const { rows } = await (await this.#pool()).query<SenderRow>({ ...FIND_DEFAULT, values: [companyId] });
    return rows[0] ? senderFromRow(rows[0]) : null;
  }

  async add(companyId: string, domainId: string, plan: (senders: readonly SenderRecord[]) => SenderDraft, audit?: AuditNote): Promise<SenderRecord> {
    return this.#em().transactional(async (em) => {
      await lockDefault(em, companyId);
      const draft = plan((await listForCompany(em, companyId)).map(senderRecord));
      const domain = await findDomainForCompany(em, companyId, domainId);
      if (!domain) throw new Error(`sending domain ${domainId} of company ${companyId} is gone`);
      if (draft.isDefault) await clearDefault(em, companyId);
      const sender = em.create(SenderSchema, { ...draft, company: em.getReference(CompanySchema, companyId), domain });
      await em.flush();
      if (audit) {
        persistAuditRow(em, companyId, { ...audit, targetType: "sender", targetId: sender.id });
        await em.flush();
      }
      return senderRecord(sender);
    });
  }

  async makeDefault(companyId: string, senderId: string, audit?: AuditNote): Promise<SenderRecord | null> {
    return this.#em().transactional(async (em) => {
      await lockDefault(em, companyId);
      const sender = await findForCompany(em, companyId, senderId);
      if (!sender) return null;
      if (!sender.isDefault) {
        await clearDefault(em, companyId);
        sender.isDefault = true;
        if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "sender", targetId: senderId });
        await em.flush();
      }
      return senderRecord(sender);
    });
  }

  async remove(
    companyId: string,
    senderId: string,
    allow: (sender: SenderRecord, senders: readonly SenderRecord[]) => void,
    audit?: AuditNote,
  ): Promise<SenderRecord | null> {
    return this.#em().transactional(async (em) => {
      await lockDefault(em, companyId);
      const sender = await findForCompany(em, companyId, senderId);
      if (!sender) return null;
      const record = senderRecord(sender);
      allow(record, (await listForCompany(em, companyId)).map(senderRecord));
      if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "sender", targetId: senderId, details: { ...audit.details, email: sender.email } });
      em.remove(sender);
      await em.flush();
      return record;
    });
  }

  /** A fresh EntityManager per operation. */
  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}

interface SenderRow {
  id: string;
  company_id: string;
  email: string;
  name: string | null;
  is_default: boolean;
  created_at: string | Date;
  domain_id: string;
  domain: string;
  return_path_domain: string;
  dkim_selector: string;
  dkim_public_key: string;
  dkim_private_key_sealed: string;
  dkim_verified: boolean;
  spf_verified: boolean;
  dmarc_verified: boolean;
  verification_overridden: boolean;
  last_checked_at: string | Date | null;
  dns_check: DnsRecordCheck[] | null;
  verified_at: string | Date | null;
  domain_created_at: string | Date;
}

/** A sender of the company with its domain (the domain is the company's too: both filters). */
const SENDER_WITH_DOMAIN = `
  select s.id, s.company_id, s.email, s.name, s.is_default, s.created_at,
         d.id as domain_id, d.domain, d.return_path_domain, d.dkim_selector, d.dkim_public_key, d.dkim_private_key_sealed,
         d.dkim_verified, d.spf_verified, d.dmarc_verified, d.verification_overridden, d.last_checked_at, d.dns_check, d.verified_at,
         d.created_at as domain_created_at
    from sender s join sending_domain d on d.id = s.domain_id and d.company_id = s.company_id
   where s.company_id = $1`;
const FIND = { name: "sender_find", text: `${SENDER_WITH_DOMAIN} and s.id = $2` };
const FIND_DEFAULT = { name: "sender_find_default", text: `${SENDER_WITH_DOMAIN} and s.is_default` };

function senderFromRow(row: SenderRow): SenderRecord {
  return {
    id: row.id,
    companyId: row.company_id,
    email: row.email,
    name: row.name,
    isDefault: row.is_default,
    createdAt: toDate(row.created_at),
    domain: {
      id: row.domain_id,
      companyId: row.company_id,
      domain: row.domain,
      returnPathDomain: row.return_path_domain,
      dkimSelector: row.dkim_selector,
      dkimPublicKey: row.dkim_public_key,
      dkimPrivateKeySealed: row.dkim_private_key_sealed,
      dkimVerified: row.dkim_verified,
      spfVerified: row.spf_verified,
      dmarcVerified: row.dmarc_verified,
      verificationOverridden: row.verification_overridden,
      lastCheckedAt: toDate(row.last_checked_at),
      lastCheck: row.dns_check,
      verifiedAt: toDate(row.verified_at),
      createdAt: toDate(row.domain_created_at),
    },
  };
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
