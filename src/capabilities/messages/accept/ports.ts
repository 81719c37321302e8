/**
 * What accepting a send needs from neighbouring capabilities (implemented in
 * src/capabilities/sending-setup and src/capabilities/credits, put together
 * in src/wiring/messaging.ts).
 */
export interface ResolvedSenderInfo {
  readonly senderId: string;
  readonly email: string;
  readonly name?: string;
}

export interface SenderDirectoryPort {
  /** The chosen or default verified sender; ApiError NOT_FOUND or SENDER_NOT_VERIFIED otherwise. */
  checkSender(companyId: string, senderId?: string): Promise<ResolvedSenderInfo>;
}

export interface TemplateContent {
  readonly id: string;
  readonly subject: string;
  readonly html: string;
  readonly text?: string | null;
}

export interface TemplatesPort {
  /** A template of the company by id or name; ApiError NOT_FOUND otherwise. */
  getTemplate(companyId: string, templateIdOrName: string): Promise<TemplateContent>;
}

export interface WalletPort {
  /** At least one credit left (src/capabilities/credits). */
  hasCredits(query: { readonly companyId: string }): Promise<boolean>;
}
