import { requiredDnsRecords, type DnsRecordView, type DnsSettings } from "./dns-records.ts";
import type { SenderRecord, SendingDomainRecord, TemplateRecord, TemplateVersionRecord } from "./ports.ts";

/** A sending domain as the setup services hand it out (never the entity, never a key). */
export interface SendingDomainView {
  readonly id: string;
  readonly companyId: string;
  readonly domain: string;
  readonly returnPathDomain: string;
  readonly dkimSelector: string;
  readonly dkimVerified: boolean;
  /** SPF through the return-path domain: its SPF TXT and its MX. */
  readonly spfVerified: boolean;
  readonly dmarcVerified: boolean;
  /** All three checks passed, or an operator overrode them. */
  readonly verified: boolean;
  readonly verificationOverridden: boolean;
  readonly dnsRecords: readonly DnsRecordView[];
  readonly lastCheckedAt: Date | null;
  readonly createdAt: Date;
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

/** A kept version of a template, as the versions list hands it out. */
export type TemplateVersionView = TemplateVersionRecord;

/** The one definition of "verified" a domain (and thus a sender) has. */
export function isDomainVerified(domain: Pick<SendingDomainRecord, "dkimVerified" | "spfVerified" | "dmarcVerified" | "verificationOverridden">): boolean {
  return domain.verificationOverridden || (domain.dkimVerified && domain.spfVerified && domain.dmarcVerified);
}

export function sendingDomainView(domain: SendingDomainRecord, settings: DnsSettings): SendingDomainView {
  return {
    id: domain.id,
    companyId: domain.companyId,
    domain: domain.domain,
    returnPathDomain: domain.returnPathDomain,
    dkimSelector: domain.dkimSelector,
    dkimVerified: domain.dkimVerified,
    spfVerified: domain.spfVerified,
    dmarcVerified: domain.dmarcVerified,
    verified: isDomainVerified(domain),
    verificationOverridden: domain.verificationOverridden,
    dnsRecords: requiredDnsRecords(domain, settings, { dkim: domain.dkimVerified, spf: domain.spfVerified, dmarc: domain.dmarcVerified }),
    lastCheckedAt: domain.lastCheckedAt,
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
