/**
 * What the double opt-in needs from outside the forms capability
 * (src/wiring/forms.ts passes the implementations).
 */

/** One confirmation email, as the messages capability takes a send. */
export interface ConfirmationMail {
  readonly companyId: string;
  readonly to: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string;
  /** Names the message for the whole company: a second send with it sends nothing. */
  readonly idempotencyKey: string;
  readonly tags: Readonly<Record<string, string>>;
}

/**
 * Sends through the normal send lifecycle (the messages accept use case:
 * the company's default sender, the credit check, the idempotency key,
 * then the message workflow and the email service). Throws the send's
 * ApiErrors: SENDER_NOT_VERIFIED / NOT_FOUND (no usable default sender),
 * INSUFFICIENT_CREDITS, IDEMPOTENCY_CONFLICT.
 */
export interface ConfirmationMailer {
  send(mail: ConfirmationMail): Promise<{ readonly messageId: string; readonly replayed: boolean }>;
}

/** Warnings of the double opt-in; never given an address, a token or a link. */
export interface ConfirmationLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/**
 * The confirmation emails a company may send per hour
 * (CONFIRMATION_EMAILS_PER_COMPANY_PER_HOUR): `take` counts one in the hour
 * starting at `hourStart` and answers false, counting nothing, once `cap`
 * were counted. One atomic step, shared by every API process.
 */
export interface ConfirmationBudget {
  take(companyId: string, hourStart: Date, cap: number): Promise<boolean>;
}

/**
 * The form tokens already used: a token is good for one sign-up. `claim`
 * records the token's fingerprint (a hash, never the token) and answers
 * false when it was recorded before. Fingerprints older than `forgetBefore`
 * (tokens that expired anyway) may be forgotten.
 */
export interface UsedFormTokens {
  claim(formId: string, fingerprint: string, at: Date, forgetBefore: Date): Promise<boolean>;
}
