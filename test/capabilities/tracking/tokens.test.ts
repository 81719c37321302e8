import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { HONEYPOT_LINK_ID, linkIdOf, TRACKING_TOKEN_MAX_AGE_MS, TrackingTokens } from "../../../src/capabilities/tracking/tokens.ts";

const binding = { companyId: randomUUID(), campaignId: randomUUID(), recipientId: randomUUID(), contactId: randomUUID() };
const AT = new Date("2026-03-01T10:00:00Z");
const tokens = new TrackingTokens("a test secret of some length");

describe("tracking tokens", () => {
  it("a click token says its kind, recipient, link and issue time, and verifies for its copy only", () => {
    const linkId = linkIdOf("https://shop.example/sale");
    const token = tokens.issue("click", binding, AT, linkId);
    expect(token).toMatch(/^[A-Za-z0-9_-]{62}$/);
    expect(tokens.read(token)).toEqual({ kind: "click", recipientId: binding.recipientId, linkId, issuedAt: AT });
    expect(tokens.verify(token, binding, AT)).toBe("valid");
    // The MAC binds company, campaign and contact, which the token does not show.
    for (const other of [{ companyId: randomUUID() }, { campaignId: randomUUID() }, { contactId: randomUUID() }, { recipientId: randomUUID() }]) {
      expect(tokens.verify(token, { ...binding, ...other }, AT)).toBe("invalid");
    }
    expect(new TrackingTokens("another secret entirely").verify(token, binding, AT)).toBe("invalid");
  });

  it("any changed character, a truncation or another spelling is invalid; nothing throws", () => {
    const token = tokens.issue("open", binding, AT);
    for (let i = 0; i < token.length; i += 1) {
      const changed = `${token.slice(0, i)}${token[i] === "A" ? "B" : "A"}${token.slice(i + 1)}`;
      expect(tokens.verify(changed, binding, AT), `position ${i}`).toBe("invalid");
    }
    for (const bad of ["", token.slice(1), `${token}=`, `${token.slice(0, -1)}+`, "\u0000".repeat(62), "é".repeat(62)]) {
      expect(tokens.verify(bad, binding, AT)).toBe("invalid");
      expect(() => tokens.read(bad)).not.toThrow();
    }
  });

  it("expires after its age, and is not accepted from the future", () => {
    const token = tokens.issue("unsubscribe", binding, AT);
    expect(tokens.verify(token, binding, new Date(AT.getTime() + TRACKING_TOKEN_MAX_AGE_MS))).toBe("valid");
    expect(tokens.verify(token, binding, new Date(AT.getTime() + TRACKING_TOKEN_MAX_AGE_MS + 1000))).toBe("expired");
    expect(tokens.verify(token, binding, new Date(AT.getTime() - 5 * 60_000))).toBe("invalid");
  });

  it("the mailto local part is lower-case hex within 64 characters, read in any case, bound like the web tokens", () => {
    const local = tokens.mailtoLocalPart(binding);
    expect(local).toMatch(/^unsubscribe\+[0-9a-f]{48}$/);
    expect(local.length).toBeLessThanOrEqual(64);
    const address = `${local}@feedback.mail.local`;
    expect(tokens.readMailto(address.toUpperCase())).toBe(binding.recipientId);
    expect(tokens.verifyMailto(address.toUpperCase(), binding)).toBe(true);
    expect(tokens.verifyMailto(address, { ...binding, contactId: randomUUID() })).toBe(false);
    expect(tokens.readMailto("b-0123@feedback.mail.local")).toBeUndefined();
  });

  it("link ids are stable per URL and never the honeypot's", () => {
    expect(linkIdOf("https://shop.example/a")).toBe(linkIdOf("https://shop.example/a"));
    expect(linkIdOf("https://shop.example/a")).not.toBe(linkIdOf("https://shop.example/b"));
    expect(linkIdOf("https://shop.example/a")).toMatch(/^[0-9a-f]{16}$/);
    expect(linkIdOf("https://shop.example/a")).not.toBe(HONEYPOT_LINK_ID);
  });
});
