import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { Sender } from "../../adapters/postgres/entities/index.ts";
import { SenderRepository } from "../../adapters/postgres/repositories/sender-repository.ts";
import { SendingDomainRepository } from "../../adapters/postgres/repositories/sending-domain-repository.ts";
import { requireCompany } from "./company.ts";
import { dkimSealContext } from "./domains.ts";
import type { SecretSealer } from "./key-sealing.ts";
import type { ResolvedSender, SendableSender, SenderDirectory } from "./types.ts";
import { validDisplayName, validSenderEmail } from "./validation.ts";
import { isDomainVerified, senderView, type SenderView } from "./views.ts";

export interface SenderServiceOptions {
  readonly orm: MikroORM;
  readonly sealer: SecretSealer;
}

export interface NewSenderInput {
  readonly email: string;
  readonly name?: string | null;
  /** Make it the default sender (the first sender of a company always is). */
  readonly makeDefault?: boolean;
}

/**
 * Sender addresses (administration) and the sender lookup of the send path.
 * Every method takes the company id first; another company's sender is
 * NOT_FOUND.
 */
export class SenderService implements SenderDirectory {
  readonly #options: SenderServiceOptions;

  constructor(options: SenderServiceOptions) {
    this.#options = options;
  }

  /**
   * Adds a sender on one of the company's domains (the domain part must be
   * one of them, case-insensitively; NOT_FOUND otherwise). The domain need
   * not be verified yet: the sender just cannot send until it is.
   */
  async createSender(companyId: string, input: NewSenderInput): Promise<SenderView> {
    const { email, domain: domainName } = validSenderEmail("email", input.email);
    const name = validDisplayName("name", input.name);
    return this.#em().transactional(async (em) => {
      const company = await requireCompany(em, companyId);
      const domain = await new SendingDomainRepository(em).findByNameForCompany(company.id, domainName);
      if (!domain) {
        throw new ApiError("NOT_FOUND", `${domainName} is not a sending domain of this company; add it first (CreateSendingDomain).`);
      }
      const senders = new SenderRepository(em);
      await senders.lockDefaultForCompany(company.id);
      const existing = await senders.listForCompany(company.id);
      // Local parts are case-sensitive in principle, but two senders that
      // differ only in case would confuse everyone who reads the From line.
      if (existing.some((sender) => sender.email.toLowerCase() === email.toLowerCase())) {
        throw new ValidationError([{ field: "email", problem: `${email} is already a sender of this company` }]);
      }
      const isDefault = input.makeDefault === true || !existing.some((sender) => sender.isDefault);
      if (isDefault) await senders.clearDefaultForCompany(company.id);
      const sender = senders.createForCompany(company, domain, { email, name, isDefault });
      await em.flush();
      return senderView(sender);
    });
  }

  /** The company's senders, oldest first. */
  async listSenders(companyId: string): Promise<SenderView[]> {
    const em = this.#em();
    await requireCompany(em, companyId);
    return (await new SenderRepository(em).listForCompany(companyId)).map(senderView);
  }

  /**
   * Makes `senderId` the company's default. The switch is one transaction
   * under a per-company lock: readers see the old default or the new one,
   * never none or two (the partial unique index guards the latter too).
   */
  async setDefaultSender(companyId: string, senderId: string): Promise<SenderView> {
    return this.#em().transactional(async (em) => {
      const senders = new SenderRepository(em);
      await senders.lockDefaultForCompany(companyId);
      const sender = await requireSender(senders, companyId, senderId);
      if (!sender.isDefault) {
        await senders.clearDefaultForCompany(companyId);
        sender.isDefault = true;
        await em.flush();
      }
      return senderView(sender);
    });
  }

  /**
   * The sender a message may go out from, without its signing key: what
   * accepting a send checks (the hot path does not unseal keys it does not use).
   */
  async checkSender(companyId: string, senderId?: string): Promise<SendableSender> {
    const { sender, domain } = await this.#sendable(companyId, senderId);
    return {
      senderId: sender.id,
      email: sender.email,
      ...(sender.name ? { name: sender.name } : {}),
      domain: domain.domain,
      returnPathDomain: domain.returnPathDomain,
    };
  }

  async resolveSender(companyId: string, senderId?: string): Promise<ResolvedSender> {
    const { sender, domain } = await this.#sendable(companyId, senderId);
    const privateKey = this.#options.sealer.unseal(domain.dkimPrivateKeySealed, dkimSealContext(sender.company.id, domain.domain));
    return {
      senderId: sender.id,
      email: sender.email,
      ...(sender.name ? { name: sender.name } : {}),
      domain: domain.domain,
      returnPathDomain: domain.returnPathDomain,
      dkim: { domainName: domain.domain, keySelector: domain.dkimSelector, privateKey },
    };
  }

  async #sendable(companyId: string, senderId: string | undefined): Promise<{ sender: Sender; domain: Sender["domain"] }> {
    const senders = new SenderRepository(this.#em());
    // Proto3 has no "absent" for a plain string: an empty senderId means none.
    const explicit = senderId !== undefined && senderId !== "";
    const sender = explicit ? await requireSender(senders, companyId, senderId) : await senders.findDefaultForCompany(companyId);
    if (!sender) {
      throw new ApiError("SENDER_NOT_VERIFIED", "The company has no default sender; create a sender on a verified sending domain.");
    }
    const domain = sender.domain;
    if (!isDomainVerified(domain)) {
      throw new ApiError(
        "SENDER_NOT_VERIFIED",
        `Sender ${sender.email} is not verified: its domain ${domain.domain} has not passed DKIM, SPF and DMARC verification.`,
      );
    }
    return { sender, domain };
  }

  /** A fresh EntityManager per operation: no identity map shared across calls. */
  #em(): EntityManager {
    return this.#options.orm.em.fork();
  }
}

async function requireSender(senders: SenderRepository, companyId: string, senderId: string): Promise<Sender> {
  const sender = await senders.findForCompany(companyId, senderId);
  if (!sender) throw new ApiError("NOT_FOUND", `senderId "${senderId}" does not name a sender of this company.`);
  return sender;
}
