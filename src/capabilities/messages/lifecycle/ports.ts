import type { DkimSigningKey } from "../email-provider.ts";

/**
 * What the message lifecycle needs from neighbouring capabilities. The
 * implementations live in src/capabilities/credits, src/capabilities/suppressions
 * and src/capabilities/sending-setup; tests may pass their own.
 */
export interface CreditsPort {
  /** Charges one credit for the message, at most once ever. */
  chargeForMessage(companyId: string, messageId: string): Promise<"charged" | "already_charged" | "insufficient">;
  /** Returns the message's credit, at most once ever (a retry may call it again after a failure). */
  refundMessage(companyId: string, messageId: string): Promise<"refunded" | "already_refunded" | "not_charged">;
}

export interface SuppressionsPort {
  isSuppressed(companyId: string, email: string): Promise<boolean>;
  /** Idempotent: a provider report repeated after a failure suppresses again. */
  suppress(companyId: string, email: string, reason: "bounce" | "complaint", messageId?: string): Promise<unknown>;
}

export interface SigningKeysPort {
  /** The sender's DKIM key; throws when the sender can no longer send (e.g. its domain lost verification). */
  resolveSender(companyId: string, senderId?: string): Promise<{ readonly dkim: DkimSigningKey }>;
}
