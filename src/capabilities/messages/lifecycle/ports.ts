import type { DkimSigningKey } from "../email-provider.ts";

/**
 * What the message lifecycle needs from neighbouring capabilities. The
 * implementations live in src/capabilities/credits, src/capabilities/suppressions
 * and src/capabilities/sending-setup; tests may pass their own.
 */
export interface CreditsPort {
  /** Charges one credit for the message, at most once ever. */
  chargeForMessage(command: { readonly companyId: string; readonly messageId: string }): Promise<"charged" | "already_charged" | "insufficient">;
  /** Returns the message's credit, at most once ever (a retry may call it again after a failure). */
  refundMessage(command: { readonly companyId: string; readonly messageId: string }): Promise<"refunded" | "already_refunded" | "not_charged">;
}

export interface SuppressionsPort {
  isSuppressed(query: { readonly companyId: string; readonly email: string }): Promise<boolean>;
  /** Idempotent: a provider report repeated after a failure suppresses again. */
  suppress(command: {
    readonly companyId: string;
    readonly email: string;
    readonly reason: "bounce" | "complaint";
    readonly messageId?: string | undefined;
  }): Promise<unknown>;
}

export interface SigningKeysPort {
  /** The sender's DKIM key; throws when the sender can no longer send (e.g. its domain lost verification). */
  resolveSender(companyId: string, senderId?: string): Promise<{ readonly dkim: DkimSigningKey }>;
}

/** The sending pace (sending-pace.ts). */
export interface PacePort {
  /** 0 when a slot of `provider`'s pace was taken; else the milliseconds to wait for one. */
  reserve(command: { readonly provider: string; readonly companyId?: string | undefined; readonly priority?: "transactional" | "campaign" | undefined }): Promise<number>;
}

/**
 * Told after a bounce or a complaint is recorded (the sending guard judges
 * the company's recent sends again). Not told of a repeated report.
 */
export interface OutcomeWatcher {
  bounceOrComplaintRecorded(command: { readonly companyId: string }): Promise<void>;
}
