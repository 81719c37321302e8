import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { SendingDomain } from "../../adapters/postgres/entities/index.ts";
import { SendingDomainRepository } from "../../adapters/postgres/repositories/sending-domain-repository.ts";
import { requireCompany } from "./company.ts";
import { generateDkimKeyPair, newDkimSelector } from "./dkim-keys.ts";
import { returnPathDomainFor, type DnsSettings } from "./dns-records.ts";
import { DnsUnavailableError, type DnsVerifier } from "../../adapters/dns/dns-verifier.ts";
import type { SecretSealer } from "./key-sealing.ts";
import { validSendingDomain } from "./validation.ts";
import { sendingDomainView, type SendingDomainView } from "./views.ts";

export interface SendingDomainServiceOptions {
  readonly orm: MikroORM;
  readonly sealer: SecretSealer;
  readonly verifier: DnsVerifier;
  readonly dns: DnsSettings;
  /** config.allowVerificationOverride: whether `override` is accepted at all. */
  readonly allowVerificationOverride: boolean;
  readonly clock: () => Date;
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
 * Every method takes the company id first; another company's domain is
 * NOT_FOUND.
 */
export class SendingDomainService {
  readonly #options: SendingDomainServiceOptions;

  constructor(options: SendingDomainServiceOptions) {
    this.#options = options;
  }

  /**
   * Adds a domain with a fresh DKIM key pair (private key stored sealed).
   * The answer lists the DNS records to publish; nothing is verified yet.
   */
  async createDomain(companyId: string, domainName: string): Promise<SendingDomainView> {
    const domain = validSendingDomain("domain", domainName);
    const em = this.#em();
    const company = await requireCompany(em, companyId);
    const repository = new SendingDomainRepository(em);
    if (await repository.findByNameForCompany(company.id, domain)) throw duplicate(domain);

    const keys = await generateDkimKeyPair();
    const created = repository.createForCompany(company, {
      domain,
      returnPathDomain: returnPathDomainFor(domain),
      dkimSelector: newDkimSelector(),
      dkimPublicKey: keys.publicKey,
      dkimPrivateKeySealed: this.#options.sealer.seal(keys.privateKeyPem, dkimSealContext(company.id, domain)),
    });
    try {
      await em.flush();
    } catch (error: unknown) {
      // A concurrent create of the same domain won the race.
      if (error instanceof UniqueConstraintViolationException) throw duplicate(domain);
      throw error;
    }
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
  async verifyDomain(companyId: string, domainId: string, options: { override?: boolean } = {}): Promise<SendingDomainView> {
    const em = this.#em();
    const domain = await requireDomain(em, companyId, domainId);
    if (options.override) {
      if (!this.#options.allowVerificationOverride) {
        throw new ApiError("FORBIDDEN", "Verification override is disabled on this deployment (ALLOW_VERIFICATION_OVERRIDE=false).");
      }
      domain.verificationOverridden = true;
      await em.flush();
      return this.#view(domain);
    }

    const state = await this.#options.verifier.check(domain).catch((error: unknown) => {
      if (error instanceof DnsUnavailableError) {
        throw new ApiError("UNAVAILABLE", `${error.message}; the domain was left unchanged, try again later.`);
      }
      throw error;
    });
    domain.dkimVerified = state.dkim;
    domain.spfVerified = state.spf;
    domain.dmarcVerified = state.dmarc;
    domain.lastCheckedAt = this.#options.clock();
    await em.flush();
    return this.#view(domain);
  }

  async getDomain(companyId: string, domainId: string): Promise<SendingDomainView> {
    return this.#view(await requireDomain(this.#em(), companyId, domainId));
  }

  /** The company's domains, oldest first. */
  async listDomains(companyId: string): Promise<SendingDomainView[]> {
    const em = this.#em();
    await requireCompany(em, companyId);
    const domains = await new SendingDomainRepository(em).listForCompany(companyId);
    return domains.map((domain) => this.#view(domain));
  }

  #view(domain: SendingDomain): SendingDomainView {
    return sendingDomainView(domain, this.#options.dns);
  }

  /** A fresh EntityManager per operation: no identity map shared across calls. */
  #em(): EntityManager {
    return this.#options.orm.em.fork();
  }
}

function duplicate(domain: string): ValidationError {
  return new ValidationError([{ field: "domain", problem: `${domain} is already a sending domain of this company` }]);
}

async function requireDomain(em: EntityManager, companyId: string, domainId: string): Promise<SendingDomain> {
  const domain = await new SendingDomainRepository(em).findForCompany(companyId, domainId);
  if (!domain) throw new ApiError("NOT_FOUND", `domainId "${domainId}" does not name a sending domain of this company.`);
  return domain;
}
