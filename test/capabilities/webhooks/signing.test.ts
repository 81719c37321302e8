import { createHmac } from "node:crypto";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { WEBHOOK_BRAND, WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from "../../../src/capabilities/webhooks/brand.ts";
import {
  generateWebhookSecret,
  signatureHeader,
  verifySignature,
  WEBHOOK_SECRET_PREFIX,
} from "../../../src/capabilities/webhooks/signing.ts";

/**
 * Receivers verify deliveries with the spec's four rules. The proof that our
 * header is what such a receiver expects uses an independent implementation
 * of the same scheme (`t=...,v1=...`, HMAC-SHA256 of "t.body"): the `stripe`
 * package's webhook verifier, which checks every v1 value in constant time
 * and refuses timestamps older than its tolerance.
 */
const stripe = new Stripe("sk_test_not_used_no_network");

const body = JSON.stringify({
  id: "3f2d8e0c-5a8b-4c1e-9d57-1c0a4a0f6b11",
  event: "delivered",
  occurredAt: "2025-11-22T10:00:00.000Z",
  data: { messageId: "9b1c", email: "ada@example.com", occurredAt: "2025-11-22T10:00:00.000Z" },
});
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe("webhook secrets", () => {
  it("are 256 random bits behind a recognisable prefix, different every time", () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a.startsWith(WEBHOOK_SECRET_PREFIX)).toBe(true);
    expect(Buffer.from(a.slice(WEBHOOK_SECRET_PREFIX.length), "base64url")).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});

describe("the signature header", () => {
  it("is t=<unix seconds>,v1=<hex HMAC-SHA256 of 't.body'>", () => {
    const secret = generateWebhookSecret();
    const header = signatureHeader(body, [secret], 1_763_805_600);
    const expected = createHmac("sha256", secret).update(`1763805600.${body}`).digest("hex");
    expect(header).toBe(`t=1763805600,v1=${expected}`);
  });

  it("holds one v1 per live secret during rotation, newest first", () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const header = signatureHeader(body, [current, previous], 1_763_805_600);
    const parts = header.split(",");
    expect(parts).toHaveLength(3);
    expect(parts[1]).toBe(`v1=${createHmac("sha256", current).update(`1763805600.${body}`).digest("hex")}`);
    expect(parts[2]).toBe(`v1=${createHmac("sha256", previous).update(`1763805600.${body}`).digest("hex")}`);
  });

  it("refuses to sign without a secret", () => {
    expect(() => signatureHeader(body, [], 1)).toThrow();
  });

  it("uses the one brand word in every header name and the user agent", () => {
    expect(WEBHOOK_BRAND).toBe("Service");
    expect(WEBHOOK_HEADERS).toEqual({ signature: "Service-Signature", delivery: "Service-Delivery", attempt: "Service-Attempt" });
    expect(WEBHOOK_USER_AGENT).toBe("Service-Mail-Webhooks/1.0");
  });
});

describe("an independent receiver (the stripe package's verifier) accepts our signatures", () => {
  it("verifies a delivery signed with the endpoint's secret", () => {
    const secret = generateWebhookSecret();
    const header = signatureHeader(body, [secret], nowSeconds());
    const event = stripe.webhooks.constructEvent(body, header, secret) as unknown as { id: string; event: string };
    expect(event.id).toBe("3f2d8e0c-5a8b-4c1e-9d57-1c0a4a0f6b11");
    expect(event.event).toBe("delivered");
  });

  it("verifies with either secret during rotation", () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const header = signatureHeader(body, [current, previous], nowSeconds());
    expect(() => stripe.webhooks.constructEvent(body, header, current)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(body, header, previous)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(body, header, generateWebhookSecret())).toThrow(/No signatures found/);
  });

  it("rejects an altered body, a wrong secret and a stale timestamp", () => {
    const secret = generateWebhookSecret();
    const header = signatureHeader(body, [secret], nowSeconds());
    expect(() => stripe.webhooks.constructEvent(body.replace("delivered", "bounced"), header, secret)).toThrow(/No signatures found/);
    expect(() => stripe.webhooks.constructEvent(body, header, generateWebhookSecret())).toThrow(/No signatures found/);
    const stale = signatureHeader(body, [secret], nowSeconds() - 6 * 60);
    expect(() => stripe.webhooks.constructEvent(body, stale, secret)).toThrow(/tolerance/);
  });
});

describe("the reference verifier (the spec's four receiver rules)", () => {
  const secret = generateWebhookSecret();
  const t = 1_763_805_600;

  it("accepts the raw body with any matching v1 within five minutes either way", () => {
    const previous = generateWebhookSecret();
    const header = signatureHeader(body, [secret, previous], t);
    expect(verifySignature(body, header, secret, t)).toEqual({ ok: true });
    expect(verifySignature(body, header, previous, t + 300)).toEqual({ ok: true });
    expect(verifySignature(body, header, previous, t - 300)).toEqual({ ok: true });
  });

  it("rejects what a receiver must reject", () => {
    const header = signatureHeader(body, [secret], t);
    // Rule 1: the raw body; a re-serialised one (other spacing) does not verify.
    const reparsed = JSON.stringify(JSON.parse(body), null, 2);
    expect(verifySignature(reparsed, header, secret, t)).toEqual({ ok: false, reason: "no_match" });
    // Rule 3: none of the v1 values matches.
    expect(verifySignature(body, header, generateWebhookSecret(), t)).toEqual({ ok: false, reason: "no_match" });
    // Rule 4: more than five minutes from the receiver's clock, in the past or the future.
    expect(verifySignature(body, header, secret, t + 301)).toEqual({ ok: false, reason: "stale" });
    expect(verifySignature(body, header, secret, t - 301)).toEqual({ ok: false, reason: "stale" });
    // A header without t or v1.
    expect(verifySignature(body, header.replace(/^t=\d+,/, ""), secret, t)).toEqual({ ok: false, reason: "malformed" });
    expect(verifySignature(body, `t=${t}`, secret, t)).toEqual({ ok: false, reason: "malformed" });
    expect(verifySignature(body, `t=${t},v1=zz`, secret, t)).toEqual({ ok: false, reason: "no_match" });
  });

  it("agrees with stripe's own test header generator", () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: t });
    expect(verifySignature(body, header, secret, t)).toEqual({ ok: true });
    expect(header).toBe(signatureHeader(body, [secret], t));
  });
});
