import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The hosted form's CSRF token: a signed hidden field
 * `issuedAtMs.nonce.HMAC-SHA256(secret, formId, issuedAtMs, nonce)`. It binds the form
 * (its internal id, so a token of one form is refused by another) and the
 * time the page was served, HMAC-signed with a server secret; a POST must
 * bring back a token this server issued for this form within `maxAgeMs`.
 * The signature is checked statelessly (any API process checks what any
 * other issued); each token is then good for ONE sign-up: the sign-up use
 * case claims its `fingerprint` in a shared store (UsedFormTokens), so a
 * token fetched once cannot be replayed to post address after address.
 * Cookies are not used (a cookie would not stop its holder from reusing
 * it; single use does).
 */
export interface FormTokens {
  issue(formId: string, at: Date): string;
  verify(formId: string, token: string, now: Date): boolean;
  /** What the used-token store keeps of a token: its SHA-256, never the token. */
  fingerprint(token: string): string;
}

export const TOKEN_MAX_AGE_MS = 2 * 60 * 60 * 1000;
/** Clocks of API processes differ a little: a token "from the future" by this much still passes. */
const CLOCK_SKEW_MS = 60 * 1000;

export function createFormTokens(secret: string, maxAgeMs = TOKEN_MAX_AGE_MS): FormTokens {
  if (secret === "") throw new Error("the form token secret must not be empty");
  // A token without a nonce (`issuedAt.mac`, pages served before nonces) is signed as it was then: still good, and still single use.
  const sign = (formId: string, issuedAt: string, nonce: string): Buffer =>
    createHmac("sha256", secret)
      .update(nonce === "" ? `signup-form\0${formId}\0${issuedAt}` : `signup-form\0${formId}\0${issuedAt}\0${nonce}`)
      .digest();
  return {
    issue(formId, at) {
      const issuedAt = String(at.getTime());
      // A random nonce: two pages served in the same millisecond get two tokens, each good once.
      const nonce = randomBytes(16).toString("base64url");
      return `${issuedAt}.${nonce}.${sign(formId, issuedAt, nonce).toString("base64url")}`;
    },
    fingerprint(token) {
      return createHash("sha256").update(token).digest("base64url");
    },
    verify(formId, token, now) {
      const match = /^(\d{1,16})\.(?:([A-Za-z0-9_-]{22})\.)?([A-Za-z0-9_-]{43})$/.exec(token);
      if (!match?.[1] || !match[3]) return false;
      const issuedAt = match[1];
      const nonce = match[2] ?? "";
      const signature = match[3];
      const age = now.getTime() - Number(issuedAt);
      if (age > maxAgeMs || age < -CLOCK_SKEW_MS) return false;
      // Compared as text: a signature spelled another way (base64url's spare low bits) is not the one issued.
      const expected = Buffer.from(sign(formId, issuedAt, nonce).toString("base64url"));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
