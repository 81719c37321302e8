import type { AuditContext } from "../audit/types.ts";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { requireCompany } from "./company.ts";
import { generateDkimKeyPair, newDkimSelector } from "./dkim-keys.ts";
import { returnPathDomainFor, type DnsSettings } from "./dns-records.ts";
import type { SecretSealer } from "./key-sealing.ts";
import { type CompanyDirectory, DnsUnavailableError, type DnsVerifier, type SendingDomainRecord, type SendingDomainStore } from "./ports.ts";
import { validSendingDomain } from "./validation.ts";
import { sendingDomainView, type SendingDomainView } from "./views.ts";

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
}

export interface CreateSendingDomainCommand {
  readonly companyId: string;
  readonly domain: string;
  readonly audit: AuditContext;
}

export interface VerifySendingDomainCommand {
  readonly companyId: string;
  readonly domainId: string;
  /** Mark verified without DNS (development only: config.allowVerificationOverride). */
  readonly override?: boolean | undefined;
  readonly audit: AuditContext;
}

export interface SendingDomainCommand {
  readonly companyId: string;
  readonly domainId: string;
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
 * Sending domains of companies (administration: AdminService, mailctl).
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
    return this.#view(created);
  }

  /**
   * Checks the domain's DNS records now and stores the outcome; with
   * `override` (development only, config.allowVerificationOverride) marks it
   * verified without looking at DNS and records that an operator did so.
   * When DNS cannot answer (timeout, SERVFAIL) nothing changes and the call
   * fails with UNAVAILABLE: a resolver outage must not unverify a domain
   * that is sending.
   */
  async verify(command: VerifySendingDomainCommand): Promise<SendingDomainView> {
    const { store } = this.#options;
    const { companyId, domainId, audit } = command;
    const domain = await requireDomain(store, companyId, domainId);
    if (command.override) {
      if (!this.#options.allowVerificationOverride) {
        throw new ApiError("FORBIDDEN", "Verification override is disabled on this deployment (ALLOW_VERIFICATION_OVERRIDE=false).");
      }
      const note = { context: audit, action: "sending_domain.verified" as const, details: { domain: domain.domain, override: true } };
      const overridden = await store.recordVerification(companyId, domain.id, { kind: "overridden" }, note);
      this.#options.onSendersChanged?.();
      return this.#view(orNotFound(overridden, domainId));
    }

    const state = await this.#options.verifier.check(domain).catch((error: unknown) => {
      if (error instanceof DnsUnavailableError) {
        throw new ApiError("SERVICE_UNAVAILABLE", `${error.message}; the domain was left unchanged, try again later.`);
      }
      throw error;
    });
    const note = { context: audit, action: "sending_domain.verified" as const, details: { domain: domain.domain, dkim: state.dkim, spf: state.spf, dmarc: state.dmarc } };
    const checked = await store.recordVerification(companyId, domain.id, { kind: "checked", state, at: this.#options.clock() }, note);
    this.#options.onSendersChanged?.();
    return this.#view(orNotFound(checked, domainId));
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
  if (!domain) throw new ApiError("NOT_FOUND", `domainId "${domainId}" does not name a sending domain of this company.`);
  return domain;
}
