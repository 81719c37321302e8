import type { SenderRecord, SendingDomainRecord, TemplateRecord, TemplateVersionRecord } from "../../../capabilities/sending-setup/ports.ts";
import type { Sender, SendingDomain, Template, TemplateVersion } from "../entities/index.ts";

/** Entities never leave the adapter: the capability gets plain records. */
export function sendingDomainRecord(domain: SendingDomain): SendingDomainRecord {
  return {
    id: domain.id,
    companyId: domain.company.id,
    domain: domain.domain,
    returnPathDomain: domain.returnPathDomain,
    dkimSelector: domain.dkimSelector,
    dkimPublicKey: domain.dkimPublicKey,
    dkimPrivateKeySealed: domain.dkimPrivateKeySealed,
    dkimVerified: domain.dkimVerified,
    spfVerified: domain.spfVerified,
    dmarcVerified: domain.dmarcVerified,
    verificationOverridden: domain.verificationOverridden,
    lastCheckedAt: domain.lastCheckedAt ?? null,
    lastCheck: domain.dnsCheck ?? null,
    verifiedAt: domain.verifiedAt ?? null,
    createdAt: domain.createdAt,
  };
}

/** `sender.domain` must be loaded (the sender store populates it). */
export function senderRecord(sender: Sender): SenderRecord {
  return {
    id: sender.id,
    companyId: sender.company.id,
    email: sender.email,
    name: sender.name ?? null,
    isDefault: sender.isDefault,
    createdAt: sender.createdAt,
    domain: sendingDomainRecord(sender.domain),
  };
}

export function templateRecord(template: Template): TemplateRecord {
  return {
    id: template.id,
    companyId: template.company.id,
    name: template.name,
    subject: template.subject,
    html: template.html,
    text: template.text ?? null,
    version: template.version,
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
  };
}

export function templateVersionRecord(version: TemplateVersion): TemplateVersionRecord {
  return {
    version: version.version,
    name: version.name,
    subject: version.subject,
    html: version.html,
    text: version.text ?? null,
    createdBy: version.createdBy,
    createdAt: version.createdAt,
    restoredFrom: version.restoredFrom ?? null,
  };
}
