import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The hosted form's CSRF token: a signed hidden field. It binds the form
 * (its internal id, so a token of one form is refused by another) and the
 * time the page was served, HMAC-signed with a server secret; a POST must
 * bring back a token this server issued for this form within `maxAgeMs`.
 * Stateless, so any API process checks what any other issued. Cookies are
 * not used: the page is often embedded in a third-party site, where they
 * are blocked.
 */
export interface FormTokens {
  issue(formId: string, at: Date): string;
  verify(formId: string, token: string, now: Date): boolean;
}

export const TOKEN_MAX_AGE_MS = 2 * 60 * 60 * 1000;
/** Clocks of API processes differ a little: a token "from the future" by this much still passes. */
const CLOCK_SKEW_MS = 60 * 1000;

export function createFormTokens(secret: string, maxAgeMs = TOKEN_MAX_AGE_MS): FormTokens {
  if (secret === "") throw new Error("the form token secret must not be empty");
  const sign = (formId: string, issuedAt: string): Buffer => createHmac("sha256", secret).update(`signup-form\0${formId}\0${issuedAt}`).digest();
  return {
    issue(formId, at) {
      const issuedAt = String(at.getTime());
      return `${issuedAt}.${sign(formId, issuedAt).toString("base64url")}`;
    },
    verify(formId, token, now) {
      const match = /^(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!match?.[1] || !match[2]) return false;
      const issuedAt = match[1];
      const age = now.getTime() - Number(issuedAt);
      if (age > maxAgeMs || age < -CLOCK_SKEW_MS) return false;
      // Compared as text: a signature spelled another way (base64url's spare low bits) is not the one issued.
      const expected = Buffer.from(sign(formId, issuedAt).toString("base64url"));
      const given = Buffer.from(match[2]);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
