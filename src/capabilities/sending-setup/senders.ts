import type { AuditContext } from "../audit/types.ts";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { requireCompany } from "./company.ts";
import { dkimSealContext } from "./domains.ts";
import type { SecretSealer } from "./key-sealing.ts";
import type { CompanyDirectory, SenderRecord, SenderStore, SendingDomainRecord, SendingDomainStore } from "./ports.ts";
import type { ResolvedSender, SendableSender, SenderDirectory } from "./types.ts";
import { validDisplayName, validSenderEmail } from "./validation.ts";
import { isDomainVerified, senderView, type SenderView } from "./views.ts";

export interface SendersDependencies {
  readonly companies: CompanyDirectory;
  readonly domains: SendingDomainStore;
  readonly store: SenderStore;
  readonly sealer: SecretSealer;
  /**
   * Called after a change that may alter what a send may go out from (a
   * sender added, a new default), before it is answered: this process's
   * cached sender checks forget what they read (other processes hear it
   * through PostgreSQL NOTIFY).
   */
  readonly onSendersChanged?: () => void;
}

/**
 * Adds a sender on one of the company's domains (the domain part must be
 * one of them, case-insensitively; NOT_FOUND otherwise). The domain need
 * not be verified yet: the sender just cannot send until it is.
 */
export interface CreateSenderCommand {
  readonly companyId: string;
  readonly email: string;
  readonly name?: string | null | undefined;
  /** Make it the default sender (the first sender of a company always is). */
  readonly makeDefault?: boolean | undefined;
  readonly audit: AuditContext;
}

export interface ListSendersCommand {
  readonly companyId: string;
}

/**
 * Makes `senderId` the company's default. The switch is atomic: readers
 * see the old default or the new one, never none or two.
 */
export interface SetDefaultSenderCommand {
  readonly companyId: string;
  readonly senderId: string;
  readonly audit: AuditContext;
}

export interface RemoveSenderCommand {
  readonly companyId: string;
  readonly senderId: string;
  readonly audit: AuditContext;
}

/**
 * Sender addresses (administration) and the sender lookup of the send path
 * (`checkSender`, `resolveSender`: the messages capability's SenderDirectory
 * port, in its shape). Every command names the company; another company's
 * sender is NOT_FOUND.
 */
export class Senders implements SenderDirectory {
  readonly #options: SendersDependencies;

  constructor(dependencies: SendersDependencies) {
    this.#options = dependencies;
  }

  async create(command: CreateSenderCommand): Promise<SenderView> {
    const { email, domain: domainName } = validSenderEmail("email", command.email);
    const name = validDisplayName("name", command.name);
    const company = await requireCompany(this.#options.companies, command.companyId);
    const domain = await this.#options.domains.findByName(company, domainName);
    if (!domain) {
      throw new ApiError("NOT_FOUND", `${domainName} is not a sending domain of this company; add it first (POST /mail/v1/domains).`);
    }
    const sender = await this.#options.store.add(company, domain.id, (existing) => {
      // Local parts are case-sensitive in principle, but two senders that
      // differ only in case would confuse everyone who reads the From line.
      if (existing.some((other) => other.email.toLowerCase() === email.toLowerCase())) {
        throw new ValidationError([{ field: "email", problem: `${email} is already a sender of this company` }]);
      }
      return { email, name, isDefault: command.makeDefault === true || !existing.some((other) => other.isDefault) };
    }, { context: command.audit, action: "sender.created", details: { email } });
    this.#options.onSendersChanged?.();
    return senderView(sender);
  }

  /** The company's senders, oldest first. */
  async list(command: ListSendersCommand): Promise<SenderView[]> {
    const company = await requireCompany(this.#options.companies, command.companyId);
    return (await this.#options.store.list(company)).map(senderView);
  }

  async setDefault(command: SetDefaultSenderCommand): Promise<SenderView> {
    const sender = await this.#options.store.makeDefault(command.companyId, command.senderId, { context: command.audit, action: "sender.made_default", details: {} });
    this.#options.onSendersChanged?.();
    return senderView(orNotFound(sender, command.senderId));
  }

  /**
   * Removes a sender. The default is refused while the company has other
   * senders (a send without senderId would otherwise lose its From line by
   * surprise); the last sender may go, default or not.
   */
  async remove(command: RemoveSenderCommand): Promise<SenderView> {
    const removed = await this.#options.store.remove(
      command.companyId,
      command.senderId,
      (sender, senders) => {
        if (sender.isDefault && senders.length > 1) {
          throw new ValidationError([{ field: "id", problem: `${sender.email} is the default sender; make another sender the default first` }]);
        }
      },
      { context: command.audit, action: "sender.removed", details: {} },
    );
    this.#options.onSendersChanged?.();
    return senderView(orNotFound(removed, command.senderId));
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
    const privateKey = this.#options.sealer.unseal(domain.dkimPrivateKeySealed, dkimSealContext(sender.companyId, domain.domain));
    return {
      senderId: sender.id,
      email: sender.email,
      ...(sender.name ? { name: sender.name } : {}),
      domain: domain.domain,
      returnPathDomain: domain.returnPathDomain,
      dkim: { domainName: domain.domain, keySelector: domain.dkimSelector, privateKey },
    };
  }

  async #sendable(companyId: string, senderId: string | undefined): Promise<{ sender: SenderRecord; domain: SendingDomainRecord }> {
    const senders = this.#options.store;
    // Proto3 has no "absent" for a plain string: an empty senderId means none.
    const explicit = senderId !== undefined && senderId !== "";
    const sender = explicit ? orNotFound(await senders.find(companyId, senderId), senderId) : await senders.findDefault(companyId);
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
}

function orNotFound(sender: SenderRecord | null, senderId: string): SenderRecord {
  if (!sender) throw new ApiError("NOT_FOUND", `senderId "${senderId}" does not name a sender of this company.`);
  return sender;
}
