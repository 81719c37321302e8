import type { AuditContext } from "../audit/types.ts";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { requireCompany } from "./company.ts";
import { generateDkimKeyPair, newDkimSelector } from "./dkim-keys.ts";
import { returnPathDomainFor, type DnsRecordView, type DnsSettings } from "./dns-records.ts";
import type { SecretSealer } from "./key-sealing.ts";
import { type CompanyDirectory, DnsUnavailableError, type DnsVerifier, type SendingDomainRecord, type SendingDomainStore } from "./ports.ts";
import { validSendingDomain } from "./validation.ts";
import { domainStatus, sendingDomainView, type SendingDomainView } from "./views.ts";

/** Told when a verified domain has lost a record (once per fall; the wiring emails the owners). */
export interface DomainDegradedAlert {
  domainDegraded(notice: DomainDegradedNotice): Promise<void>;
}

export interface DomainDegradedNotice {
  readonly companyId: string;
  readonly domainId: string;
  readonly domain: string;
  /** The records that are no longer as published, with what DNS answers now. */
  readonly records: readonly DnsRecordView[];
  readonly at: Date;
}

/** Told when a domain is added, checked by a caller or removed (the wiring starts its re-check workflow, again when none runs). */
export interface DomainLifecycle {
  domainAdded(domain: { readonly companyId: string; readonly domainId: string }): Promise<void>;
  domainChecked(domain: { readonly companyId: string; readonly domainId: string }): Promise<void>;
  domainRemoved(domain: { readonly companyId: string; readonly domainId: string }): Promise<void>;
}

export interface SendingDomainsDependencies {
  readonly companies: CompanyDirectory;
  readonly store: SendingDomainStore;
  readonly sealer: SecretSealer;
  readonly verifier: DnsVerifier;
  readonly dns: DnsSettings;
  /** Whether `override` is accepted at all (a development setting). */
  readonly allowVerificationOverride: boolean;
  readonly clock: () => Date;
  /**
   * Called after a verification is recorded, before it is answered: this
   * process's cached sender checks forget what they read (a domain may
   * have stopped being verified; other processes hear it through NOTIFY).
   */
  readonly onSendersChanged?: () => void;
  /** The owners' notice of a degraded domain; none: nobody is told. */
  readonly degradedAlert?: DomainDegradedAlert;
  /** The re-check workflow of each domain; none: only "check now" checks. */
  readonly lifecycle?: DomainLifecycle;
}

export interface CreateSendingDomainCommand {
  readonly companyId: string;
  readonly domain: string;
  readonly audit: AuditContext;
}

/** "Check now" by a caller (audited), or the service's own re-check (`audit` absent). */
export interface CheckSendingDomainCommand {
  readonly companyId: string;
  readonly domainId: string;
  readonly audit?: AuditContext | undefined;
}

/** An operator marks the domain verified without DNS (development only: config.allowVerificationOverride). */
export interface OverrideDomainVerificationCommand {
  readonly companyId: string;
  readonly domainId: string;
  readonly audit: AuditContext;
}

export interface SendingDomainCommand {
  readonly companyId: string;
  readonly domainId: string;
}

export interface DeleteSendingDomainCommand {
  readonly companyId: string;
  readonly domainId: string;
  readonly audit: AuditContext;
}

export interface ListSendingDomainsCommand {
  readonly companyId: string;
}

/**
 * What a sealed DKIM key is bound to (see key-sealing.ts): its company and
 * domain, the row's unique key. A sealed key moved to another row does not open.
 */
export function dkimSealContext(companyId: string, domain: string): string {
  return `sending_domain:${companyId}:${domain}`;
}

/**
 * Sending domains of companies (DomainsService; the override: AdminService).
 * Every command names the company; another company's domain is NOT_FOUND.
 */
export class SendingDomains {
  readonly #options: SendingDomainsDependencies;

  constructor(dependencies: SendingDomainsDependencies) {
    this.#options = dependencies;
  }

  /**
   * Adds a domain with a fresh DKIM key pair (private key stored sealed).
   * The answer lists the DNS records to publish; nothing is verified yet.
   * Its re-check workflow starts (a failure to start it is the lifecycle's
   * to retry; the domain is added either way).
   */
  async create(command: CreateSendingDomainCommand): Promise<SendingDomainView> {
    const domain = validSendingDomain("domain", command.domain);
    const { companies, store, sealer } = this.#options;
    const company = await requireCompany(companies, command.companyId);
    if (await store.findByName(company, domain)) throw duplicate(domain);

    const keys = await generateDkimKeyPair();
    const created = await store.add(company, {
      domain,
      returnPathDomain: returnPathDomainFor(domain),
      dkimSelector: newDkimSelector(),
      dkimPublicKey: keys.publicKey,
      dkimPrivateKeySealed: sealer.seal(keys.privateKeyPem, dkimSealContext(company, domain)),
    }, { context: command.audit, action: "sending_domain.created", details: { domain } });
    // A concurrent create of the same domain won the race.
    if (!created) throw duplicate(domain);
    await this.#options.lifecycle?.domainAdded({ companyId: company, domainId: created.id });
    return this.#view(created);
  }

  /**
   * Checks the domain's DNS records now and stores what was seen, record by
   * record. A domain verified once stays sendable: losing a record makes it
   * `degraded`, and its owners are told (once per fall). When DNS cannot
   * answer (timeout, SERVFAIL) nothing changes and the call fails with
   * UNAVAILABLE: a resolver outage must not change a domain that is sending.
   */
  async check(command: CheckSendingDomainCommand): Promise<SendingDomainView> {
    const { store } = this.#options;
    const { companyId, domainId, audit } = command;
    const before = await requireDomain(store, companyId, domainId);
    const report = await this.#options.verifier.check(before).catch((error: unknown) => {
      if (error instanceof DnsUnavailableError) {
        throw new ApiError("SERVICE_UNAVAILABLE", `${error.message}; the domain was left unchanged, try again later.`);
      }
      throw error;
    });
    const note = audit
      ? { context: audit, action: "sending_domain.verified" as const, details: { domain: before.domain, dkim: report.dkim, spf: report.spf, dmarc: report.dmarc } }
      : undefined;
    const at = this.#options.clock();
    const checked = orNotFound(await store.recordVerification(companyId, before.id, { kind: "checked", report, at }, note), domainId);
    this.#options.onSendersChanged?.();
    const view = this.#view(checked);
    if (domainStatus(before) !== "degraded" && view.status === "degraded") {
      await this.#options.degradedAlert?.domainDegraded({
        companyId,
        domainId: view.id,
        domain: view.domain,
        records: view.dnsRecords.filter((record) => record.state !== "verified"),
        at,
      });
    }
    // A caller's check restarts the automatic ones if they had stopped (a domain pending past its window).
    if (audit) await this.#options.lifecycle?.domainChecked({ companyId, domainId: view.id });
    return view;
  }

  /**
   * Marks the domain verified without looking at DNS and records that an
   * operator did so (development only: refused unless
   * config.allowVerificationOverride).
   */
  async overrideVerification(command: OverrideDomainVerificationCommand): Promise<SendingDomainView> {
    const { store } = this.#options;
    const { companyId, domainId, audit } = command;
    if (!this.#options.allowVerificationOverride) {
      throw new ApiError("FORBIDDEN", "Verification override is disabled on this deployment (ALLOW_VERIFICATION_OVERRIDE=false).");
    }
    const domain = await requireDomain(store, companyId, domainId);
    const note = { context: audit, action: "sending_domain.verified" as const, details: { domain: domain.domain, override: true } };
    const overridden = await store.recordVerification(companyId, domain.id, { kind: "overridden", at: this.#options.clock() }, note);
    this.#options.onSendersChanged?.();
    return this.#view(orNotFound(overridden, domainId));
  }

  async get(command: SendingDomainCommand): Promise<SendingDomainView> {
    return this.#view(await requireDomain(this.#options.store, command.companyId, command.domainId));
  }

  /** The company's domains, oldest first. */
  async list(command: ListSendingDomainsCommand): Promise<SendingDomainView[]> {
    const company = await requireCompany(this.#options.companies, command.companyId);
    const domains = await this.#options.store.list(company);
    return domains.map((domain) => this.#view(domain));
  }

  /** Deletes a domain that has no senders left; its re-check workflow ends. */
  async remove(command: DeleteSendingDomainCommand): Promise<{ readonly id: string }> {
    const { store } = this.#options;
    const domain = await requireDomain(store, command.companyId, command.domainId);
    const note = { context: command.audit, action: "sending_domain.deleted" as const, details: { domain: domain.domain } };
    const outcome = await store.remove(command.companyId, domain.id, note);
    if (outcome === "not_found") orNotFound(null, command.domainId);
    if (outcome === "has_senders") {
      throw new ValidationError([{ field: "id", problem: `${domain.domain} still has senders; remove them first` }]);
    }
    this.#options.onSendersChanged?.();
    await this.#options.lifecycle?.domainRemoved({ companyId: command.companyId, domainId: domain.id });
    return { id: domain.id };
  }

  #view(domain: SendingDomainRecord): SendingDomainView {
    return sendingDomainView(domain, this.#options.dns);
  }
}

function duplicate(domain: string): ValidationError {
  return new ValidationError([{ field: "domain", problem: `${domain} is already a sending domain of this company` }]);
}

async function requireDomain(store: SendingDomainStore, companyId: string, domainId: string): Promise<SendingDomainRecord> {
  return orNotFound(await store.find(companyId, domainId), domainId);
}

function orNotFound(domain: SendingDomainRecord | null, domainId: string): SendingDomainRecord {
  if (!domain) throw new ApiError("NOT_FOUND", `id "${domainId}" does not name a sending domain of this company.`);
  return domain;
}

/** The owners' email when a verified domain lost a record: which records, what DNS answers now, what to do. */
export function domainDegradedEmail(notice: DomainDegradedNotice): { readonly subject: string; readonly paragraphs: readonly string[]; readonly screenPath: string } {
  const lines = notice.records.map((record) => {
    const seen = record.found.length === 0 ? "nothing is published there" : `DNS answers ${record.found.join(" | ")}`;
    return `${record.type} ${record.name} (${record.purpose}) is ${record.state}: publish ${record.value} (${seen}).`;
  });
  return {
    subject: `Sending domain ${notice.domain} has lost DNS records`,
    paragraphs: [
      `The sending domain ${notice.domain} was verified, and the DNS check of ${notice.at.toISOString()} no longer finds every record as published. Its status is now degraded.`,
      ...lines,
      "Mail from this domain still goes out, but receivers may reject it or put it in spam until the records are back. Publish them again, then press Check now on the Domains page.",
    ],
    screenPath: "/admin/domains",
  };
}
