/**
 * What the sending setup needs from the outside: storage of domains,
 * senders and templates (PostgreSQL: src/adapters/postgres/sending-setup/)
 * and DNS lookups (src/adapters/dns/dns-verifier.ts).
 *
 * TENANT ISOLATION: every storage method takes the company id first and
 * sees that company's rows only; another company's id simply finds nothing.
 * Ids that cannot be row ids find nothing either.
 */
import type { AuditNote } from "../audit/types.ts";
import type { DnsCheckReport, DnsRecordCheck, DomainDnsFacts } from "./dns-records.ts";

export interface CompanyDirectory {
  /** The company's id as stored (its one spelling), or null when there is no such company. */
  findCompanyId(companyId: string): Promise<string | null>;
}

/** A sending domain as stored. `dkimPrivateKeySealed` is sealed (key-sealing.ts), never a usable key. */
export interface SendingDomainRecord extends DomainDnsFacts {
  readonly id: string;
  readonly companyId: string;
  readonly dkimPrivateKeySealed: string;
  readonly dkimVerified: boolean;
  readonly spfVerified: boolean;
  readonly dmarcVerified: boolean;
  readonly verificationOverridden: boolean;
  readonly lastCheckedAt: Date | null;
  /** Each record as the last check saw it; null before the first check. */
  readonly lastCheck: readonly DnsRecordCheck[] | null;
  /** When it was first verified (every record found, or overridden); null while pending. Once set, its senders may send. */
  readonly verifiedAt: Date | null;
  readonly createdAt: Date;
}

export interface NewSendingDomain extends DomainDnsFacts {
  readonly dkimPrivateKeySealed: string;
}

/** What a verification stores: the outcome of a DNS check, or an operator's override. */
export type DomainVerification = { readonly kind: "checked"; readonly report: DnsCheckReport; readonly at: Date } | { readonly kind: "overridden"; readonly at: Date };

/** What deleting a domain came to. */
export type DomainRemoval = "removed" | "not_found" | "has_senders";

export interface SendingDomainStore {
  /** A new domain of the company; null when it has a domain of that name already (also when a concurrent add won). */
  /** With `audit`, its audit row in the same transaction (so for recordVerification, the sender store's add and makeDefault, and put). */
  add(companyId: string, domain: NewSendingDomain, audit?: AuditNote): Promise<SendingDomainRecord | null>;
  find(companyId: string, domainId: string): Promise<SendingDomainRecord | null>;
  /** By the normalised name (validSendingDomain()). */
  findByName(companyId: string, domain: string): Promise<SendingDomainRecord | null>;
  /** Oldest first. */
  list(companyId: string): Promise<SendingDomainRecord[]>;
  /** Stores a verification; the domain as it is then, or null when the company has no such domain. */
  recordVerification(companyId: string, domainId: string, verification: DomainVerification, audit?: AuditNote): Promise<SendingDomainRecord | null>;
  /**
   * Deletes the domain unless it still has senders (checked under the
   * company's default-sender lock, so a sender added meanwhile is seen).
   */
  remove(companyId: string, domainId: string, audit?: AuditNote): Promise<DomainRemoval>;
}

/** A sender as stored, with its domain (whether it may send depends on it). */
export interface SenderRecord {
  readonly id: string;
  readonly companyId: string;
  readonly email: string;
  readonly name: string | null;
  readonly isDefault: boolean;
  readonly createdAt: Date;
  readonly domain: SendingDomainRecord;
}

export interface SenderDraft {
  readonly email: string;
  readonly name: string | null;
  readonly isDefault: boolean;
}

export interface SenderStore {
  /** Oldest first. */
  list(companyId: string): Promise<SenderRecord[]>;
  find(companyId: string, senderId: string): Promise<SenderRecord | null>;
  findDefault(companyId: string): Promise<SenderRecord | null>;
  /**
   * Adds a sender on `domainId` (a domain of the company) in one
   * transaction under the company's default-sender lock: `plan` is handed
   * the company's senders as they are under the lock and answers the sender
   * to add, or throws (then nothing is written). A new default takes the
   * flag from the previous one in the same transaction, so readers see one
   * default or the other, never none or two.
   */
  add(companyId: string, domainId: string, plan: (senders: readonly SenderRecord[]) => SenderDraft, audit?: AuditNote): Promise<SenderRecord>;
  /** Makes the sender the company's one default, under the same lock; null when the company has no such sender. */
  makeDefault(companyId: string, senderId: string, audit?: AuditNote): Promise<SenderRecord | null>;
  /**
   * Removes a sender under the same lock: `allow` is handed the sender and
   * the company's senders as they are under the lock, and throws to refuse.
   * Null when the company has no such sender.
   */
  remove(companyId: string, senderId: string, allow: (sender: SenderRecord, senders: readonly SenderRecord[]) => void, audit?: AuditNote): Promise<SenderRecord | null>;
}

export interface TemplateRecord {
  readonly id: string;
  readonly companyId: string;
  readonly name: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string | null;
  /** The number of its latest version. */
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface TemplateContent {
  readonly name: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string | null;
}

/** A kept version: the content one change left, by whom. */
export interface TemplateVersionRecord extends TemplateContent {
  readonly version: number;
  /** The audit actor's label (a member's email, a key's prefix, `operator`). */
  readonly createdBy: string;
  readonly createdAt: Date;
  /** The version a restore copied; null for an edit. */
  readonly restoredFrom: number | null;
}

/** How many versions of a template are kept: every change adds one and prunes the oldest beyond this. */
export const KEPT_TEMPLATE_VERSIONS = 20;

export interface TemplateStore {
  /** By name. */
  list(companyId: string): Promise<TemplateRecord[]>;
  find(companyId: string, templateId: string): Promise<TemplateRecord | null>;
  findByName(companyId: string, name: string): Promise<TemplateRecord | null>;
  /**
   * Creates the company's template of that name or replaces its content,
   * atomically: concurrent puts of a new name make one template. A replaced
   * template keeps its id and createdAt. Each put adds a version (keeping
   * the last KEPT_TEMPLATE_VERSIONS) and the audit row, in one transaction.
   */
  put(companyId: string, content: TemplateContent, audit: AuditNote): Promise<TemplateRecord>;
  /**
   * Makes version `version` of the template its content again, as a new
   * version (the template keeps its name); null when the company has no such
   * template or the version is not kept.
   */
  restore(companyId: string, templateId: string, version: number, audit: AuditNote): Promise<TemplateRecord | null>;
  /** Deletes the template and its versions; false when the company has no such template. */
  delete(companyId: string, templateId: string, audit: AuditNote): Promise<boolean>;
  /** Writes the audit row of a test send of the template (the message itself is the send path's). */
  noteTestSend(companyId: string, templateId: string, audit: AuditNote): Promise<void>;
  /** The kept versions, newest first. */
  versions(companyId: string, templateId: string): Promise<TemplateVersionRecord[]>;
}

/** Checks a domain's published records against what we asked for. */
export interface DnsVerifier {
  /** Throws DnsUnavailableError when DNS could not answer (as opposed to "no such record"). */
  check(facts: DomainDnsFacts): Promise<DnsCheckReport>;
}

/**
 * DNS did not give an answer (timeout, SERVFAIL, refused): nothing can be
 * concluded, so nothing about the domain should change.
 */
export class DnsUnavailableError extends Error {
  readonly code: string;
  constructor(name: string, code: string) {
    super(`DNS lookup of ${name} failed (${code})`);
    this.name = "DnsUnavailableError";
    this.code = code;
  }
}
