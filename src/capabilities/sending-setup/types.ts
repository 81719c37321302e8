/**
 * What the send path needs from the sending setup. The services beside this
 * file implement these; the send path depends on these types only.
 */
import type { DkimSigningKey } from "../messages/email-provider.ts";

/** A sender that may send now, as accepting a send needs it. */
export interface SendableSender {
  readonly senderId: string;
  readonly email: string;
  readonly name?: string;
  /** The sender's sending domain (DKIM `d=`). */
  readonly domain: string;
  /** The custom MAIL FROM domain: the envelope sender is `<something>@<returnPathDomain>`. */
  readonly returnPathDomain: string;
}

/** A sendable sender with its signing key, as the handoff needs it. */
export interface ResolvedSender extends SendableSender {
  /** `privateKey` is the unsealed PEM: keep it in memory only. */
  readonly dkim: DkimSigningKey;
}

export interface SenderDirectory {
  /**
   * The sender a message of `companyId` goes out from: `senderId` when
   * given, else the company's default sender. Throws ApiError NOT_FOUND
   * (unknown senderId, or another company's) or SENDER_NOT_VERIFIED (no
   * default sender, or the sender's domain is not verified).
   */
  resolveSender(companyId: string, senderId?: string): Promise<ResolvedSender>;
  /** The same checks as resolveSender, without unsealing the signing key. */
  checkSender(companyId: string, senderId?: string): Promise<SendableSender>;
}

export interface StoredTemplate {
  readonly id: string;
  readonly name: string;
  readonly subject: string;
  readonly html: string;
  readonly text?: string;
}

export interface TemplateLookup {
  /** By UUID id or by name; throws ApiError NOT_FOUND when the company has no such template. */
  getTemplate(companyId: string, templateIdOrName: string): Promise<StoredTemplate>;
}
