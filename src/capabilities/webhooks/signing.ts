import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Webhook signatures (spec: Webhook authentication). Each delivery carries
 * `<Brand>-Signature: t=<unix seconds>,v1=<hex>`, where the hex value is
 * HMAC-SHA256 over `<t>.<raw body>` keyed with the endpoint's secret (its
 * full text, prefix included, as UTF-8). During the 24 hours after a
 * rotation the header holds one `v1` per live secret, newest first, so a
 * receiver holding either secret verifies.
 *
 * This is the same scheme as Stripe's `Stripe-Signature`, so receivers can
 * use an off-the-shelf verifier (test/capabilities/webhooks/signing.test.ts
 * proves it with the `stripe` package).
 */

/** Prefix that makes a webhook secret recognisable (in logs, in secret scanners). */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
/** 256 bits of randomness per secret. */
const SECRET_BYTES = 32;
/** Spec, Limits: webhook signature tolerance. */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

/** A new secret: `whsec_` and 256 random bits in base64url (43 characters). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64url");
}

/** Hex HMAC-SHA256 of `<t>.<body>` with `secret`. */
export function computeSignature(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/**
 * The signature header value for `body` at `timestamp` (unix seconds), one
 * `v1` per secret in the order given (current first).
 */
export function signatureHeader(body: string, secrets: readonly string[], timestamp: number): string {
  if (secrets.length === 0) throw new Error("signing needs at least one secret");
  if (!Number.isInteger(timestamp) || timestamp < 0) throw new Error("the signature timestamp is whole unix seconds");
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${computeSignature(secret, timestamp, body)}`)].join(",");
}

export type VerifyResult = { readonly ok: true } | { readonly ok: false; readonly reason: "malformed" | "no_match" | "stale" };

/**
 * A receiver's verification, the spec's four rules: over the raw body as
 * received, compute the HMAC of `t + "." + body`, compare it in constant
 * time with every `v1` value, and reject a `t` more than five minutes from
 * the receiver's clock (either way). Kept here as the reference the docs
 * and tests use; the service itself only signs.
 */
export function verifySignature(
  body: string,
  header: string,
  secret: string,
  nowSeconds: number,
  toleranceSeconds: number = SIGNATURE_TOLERANCE_SECONDS,
): VerifyResult {
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const item of header.split(",")) {
    const eq = item.indexOf("=");
    if (eq === -1) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === "t" && /^\d+$/.test(value)) timestamp = Number(value);
    else if (key === "v1") candidates.push(value);
  }
  if (timestamp === undefined || candidates.length === 0) return { ok: false, reason: "malformed" };
  const expected = Buffer.from(computeSignature(secret, timestamp, body), "hex");
  let matched = false;
  for (const candidate of candidates) {
    const wellFormed = /^[0-9a-f]{64}$/i.test(candidate);
    const given = wellFormed ? Buffer.from(candidate, "hex") : Buffer.alloc(expected.length);
    // Every candidate is compared, match or not: timing tells nothing about which one matched.
    const equal = timingSafeEqual(given, expected);
    matched = matched || (wellFormed && equal);
  }
  if (!matched) return { ok: false, reason: "no_match" };
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return { ok: false, reason: "stale" };
  return { ok: true };
}
