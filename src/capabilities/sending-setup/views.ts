import { requiredDnsRecords, type DnsRecordCheck, type DnsRecordView, type DnsSettings } from "./dns-records.ts";
import type { SenderRecord, SendingDomainRecord, TemplateRecord, TemplateVersionRecord } from "./ports.ts";

/** A sending domain as the setup services hand it out (never the entity, never a key). */
export interface SendingDomainView {
  readonly id: string;
  readonly companyId: string;
  readonly domain: string;
  readonly returnPathDomain: string;
  readonly dkimSelector: string;
  readonly status: DomainStatus;
  readonly dkimVerified: boolean;
  /** SPF through the return-path domain: its SPF TXT and its MX. */
  readonly spfVerified: boolean;
  readonly dmarcVerified: boolean;
  /** All three checks passed, or an operator overrode them. */
  readonly verified: boolean;
  readonly verificationOverridden: boolean;
  readonly dnsRecords: readonly DnsRecordView[];
  readonly lastCheckedAt: Date | null;
  readonly verifiedAt: Date | null;
  readonly createdAt: Date;
}

/**
 * `pending`: never verified. `verified`: every record found and correct at
 * the last check, or overridden by an operator. `degraded`: verified once,
 * and a record has since gone missing or changed (sending goes on).
 */
export type DomainStatus = "pending" | "verified" | "degraded";

type VerificationFacts = Pick<SendingDomainRecord, "dkimVerified" | "spfVerified" | "dmarcVerified" | "verificationOverridden" | "verifiedAt">;

export function domainStatus(domain: VerificationFacts): DomainStatus {
  if (domain.verificationOverridden || (domain.dkimVerified && domain.spfVerified && domain.dmarcVerified)) return "verified";
  return domain.verifiedAt ? "degraded" : "pending";
}

export interface SenderView {
  readonly id: string;
  readonly companyId: string;
  readonly domainId: string;
  readonly email: string;
  readonly name: string | null;
  readonly isDefault: boolean;
  /** The sender's domain is verified. */
  readonly verified: boolean;
  readonly createdAt: Date;
}

export interface TemplateView {
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

/**
 * The one definition of "may send" a domain (and thus a sender) has: it was
 * verified once (a degraded domain goes on sending: docs/domains.md), or an
 * operator overrode the check.
 */
export function isDomainVerified(domain: VerificationFacts): boolean {
  return domain.verificationOverridden || domain.verifiedAt !== null || (domain.dkimVerified && domain.spfVerified && domain.dmarcVerified);
}

/** Each record as last seen; a domain checked before records were kept answers its three verdicts. */
function lastChecks(domain: SendingDomainRecord): readonly DnsRecordCheck[] | null {
  if (domain.lastCheck) return domain.lastCheck;
  if (!domain.lastCheckedAt) return null;
  const state = (ok: boolean): "verified" | "missing" => (ok ? "verified" : "missing");
  return [
    { purpose: "dkim", state: state(domain.dkimVerified), found: [] },
    { purpose: "spf", state: state(domain.spfVerified), found: [] },
    { purpose: "return_path", state: state(domain.spfVerified), found: [] },
    { purpose: "dmarc", state: state(domain.dmarcVerified), found: [] },
  ];
}

/** A kept version of a template, as the versions list hands it out. */
export type TemplateVersionView = TemplateVersionRecord;

export function sendingDomainView(domain: SendingDomainRecord, settings: DnsSettings): SendingDomainView {
  return {
    id: domain.id,
    companyId: domain.companyId,
    domain: domain.domain,
    returnPathDomain: domain.returnPathDomain,
    dkimSelector: domain.dkimSelector,
    status: domainStatus(domain),
    dkimVerified: domain.dkimVerified,
    spfVerified: domain.spfVerified,
    dmarcVerified: domain.dmarcVerified,
    verified: isDomainVerified(domain),
    verificationOverridden: domain.verificationOverridden,
    dnsRecords: requiredDnsRecords(domain, settings, lastChecks(domain)),
    lastCheckedAt: domain.lastCheckedAt,
    verifiedAt: domain.verifiedAt,
    createdAt: domain.createdAt,
  };
}

export function senderView(sender: SenderRecord): SenderView {
  return {
    id: sender.id,
    companyId: sender.companyId,
    domainId: sender.domain.id,
    email: sender.email,
    name: sender.name,
    isDefault: sender.isDefault,
    verified: isDomainVerified(sender.domain),
    createdAt: sender.createdAt,
  };
}

export function templateView(template: TemplateRecord): TemplateView {
  return {
    id: template.id,
    companyId: template.companyId,
    name: template.name,
    subject: template.subject,
    html: template.html,
    text: template.text,
    version: template.version,
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
  };
}

export function templateVersionView(version: TemplateVersionRecord): TemplateVersionView {
  return { ...version };
}
