import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The token of a double opt-in confirmation link
 * (`/mail/v1/forms/{publicId}/confirm?token=…`):
 *
 *     <contactId>.<consentVersion>.<issuedAt, unix seconds>.<HMAC-SHA256, base64url>
 *
 * The MAC covers the company, the form (internal id), the contact, its
 * address (lower-cased) and the consent text version besides what the token
 * shows, so a token works for that one sign-up only: not on another form's
 * address, not for another contact, not after the contact's address
 * changed. The address itself is not in the link (links end up in proxy
 * and scanner logs). Stateless: any API process checks what any other
 * issued. The key is derived from the hosted form's token secret with its
 * own label, so a CSRF token can never pass as a confirmation or back.
 */
export interface ConfirmationBinding {
  readonly companyId: string;
  readonly formId: string;
  readonly contactId: string;
  readonly email: string;
  readonly consentVersion: number;
}

/** What a link's token says before it is checked against the stored sign-up. */
export interface ConfirmationClaim {
  readonly contactId: string;
  readonly consentVersion: number;
  readonly issuedAt: Date;
}

export type ConfirmationCheck = "valid" | "expired" | "invalid";

export interface ConfirmationTokens {
  issue(binding: ConfirmationBinding, at: Date): string;
  /** The token's claims when it is well formed (its MAC is not checked yet); undefined otherwise. */
  read(token: string): ConfirmationClaim | undefined;
  /** Checks the MAC against `binding` (constant time), then the age. A bad MAC is `invalid` whatever the age. */
  verify(token: string, binding: ConfirmationBinding, now: Date): ConfirmationCheck;
}

/** How long a confirmation link works: a week covers holidays and slow inboxes without keeping old links alive for good. */
export const CONFIRMATION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Clocks of API processes differ a little: a token "from the future" by this much still passes. */
const CLOCK_SKEW_MS = 60 * 1000;

const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([1-9][0-9]{0,8})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

/** The confirmation key, derived from the hosted form's token secret under its own label. */
export function confirmationKey(formTokenSecret: string): Buffer {
  if (formTokenSecret === "") throw new Error("the form token secret must not be empty");
  return createHmac("sha256", formTokenSecret).update("mail.v1.signup-confirmation-link").digest();
}

export function createConfirmationTokens(formTokenSecret: string, maxAgeMs = CONFIRMATION_MAX_AGE_MS): ConfirmationTokens {
  const key = confirmationKey(formTokenSecret);
  const mac = (b: ConfirmationBinding, issuedAt: string): string =>
    createHmac("sha256", key)
      .update(["signup-confirmation", b.companyId, b.formId, b.contactId.toLowerCase(), b.email.toLowerCase(), String(b.consentVersion), issuedAt].join("\0"))
      .digest("base64url");

  const parse = (token: string) => {
    const match = TOKEN.exec(token);
    if (!match?.[1] || !match[2] || !match[3] || !match[4]) return undefined;
    return { contactId: match[1], consentVersion: Number(match[2]), issuedAt: match[3], signature: match[4] };
  };

  return {
    issue(binding, at) {
      const issuedAt = String(Math.floor(at.getTime() / 1000));
      return `${binding.contactId.toLowerCase()}.${binding.consentVersion}.${issuedAt}.${mac(binding, issuedAt)}`;
    },

    read(token) {
      const parsed = parse(token);
      return parsed ? { contactId: parsed.contactId, consentVersion: parsed.consentVersion, issuedAt: new Date(Number(parsed.issuedAt) * 1000) } : undefined;
    },

    verify(token, binding, now) {
      const parsed = parse(token);
      if (!parsed) return "invalid";
      if (parsed.contactId !== binding.contactId.toLowerCase() || parsed.consentVersion !== binding.consentVersion) return "invalid";
      // Compared as text: a signature spelled another way (base64url's spare low bits) is not the one issued.
      const expected = Buffer.from(mac(binding, parsed.issuedAt));
      const given = Buffer.from(parsed.signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "invalid";
      const age = now.getTime() - Number(parsed.issuedAt) * 1000;
      if (age < -CLOCK_SKEW_MS) return "invalid";
      return age > maxAgeMs ? "expired" : "valid";
    },
  };
}
