import { describe, expect, it } from "vitest";
import { createFormTokens } from "../../../src/capabilities/forms/hosted/csrf.ts";
import { clientBudgetKey } from "../../../src/capabilities/forms/hosted/submit-signup.ts";
import { CONFIRMATION_MAX_AGE_MS, type ConfirmationBinding, createConfirmationTokens } from "../../../src/capabilities/forms/hosted/index.ts";

const SECRET = "test-form-token-secret";
const AT = new Date("2030-03-01T10:00:00.000Z");

const binding: ConfirmationBinding = {
  companyId: "0b9d6a4e-1111-4a51-9c0e-5f6d2f7f0001",
  formId: "0b9d6a4e-2222-4a51-9c0e-5f6d2f7f0002",
  contactId: "0b9d6a4e-3333-4a51-9c0e-5f6d2f7f0003",
  email: "ada@example.com",
  consentVersion: 2,
};

/** The token with one bit of its MAC's first byte flipped. */
function tampered(token: string): string {
  const parts = token.split(".");
  const bytes = Buffer.from(parts[3] ?? "", "base64url");
  bytes[0] = (bytes[0] ?? 0) ^ 1;
  return [...parts.slice(0, 3), bytes.toString("base64url")].join(".");
}

describe("confirmation link tokens", () => {
  const tokens = createConfirmationTokens(SECRET);

  it("carry the contact, the consent version and the time, never the address", () => {
    const token = tokens.issue(binding, AT);
    expect(token).toMatch(/^0b9d6a4e-3333-4a51-9c0e-5f6d2f7f0003\.2\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(token).not.toContain("example");
    expect(tokens.read(token)).toEqual({ contactId: binding.contactId, consentVersion: 2, issuedAt: AT });
    expect(tokens.verify(token, binding, AT)).toBe("valid");
  });

  it("are valid for 7 days, then expired", () => {
    const token = tokens.issue(binding, AT);
    expect(tokens.verify(token, binding, new Date(AT.getTime() + CONFIRMATION_MAX_AGE_MS))).toBe("valid");
    expect(tokens.verify(token, binding, new Date(AT.getTime() + CONFIRMATION_MAX_AGE_MS + 1000))).toBe("expired");
    // Issued far in the future (a clock gone wrong, or a forged time): never valid.
    expect(tokens.verify(tokens.issue(binding, new Date(AT.getTime() + 3600_000)), binding, AT)).toBe("invalid");
  });

  it("are bound to the company, the form, the contact, its address and the consent version", () => {
    const token = tokens.issue(binding, AT);
    const others: ConfirmationBinding[] = [
      { ...binding, companyId: "0b9d6a4e-9999-4a51-9c0e-5f6d2f7f0001" },
      { ...binding, formId: "0b9d6a4e-9999-4a51-9c0e-5f6d2f7f0002" },
      { ...binding, contactId: "0b9d6a4e-9999-4a51-9c0e-5f6d2f7f0003" },
      { ...binding, email: "eve@example.com" },
      { ...binding, consentVersion: 3 },
    ];
    for (const other of others) expect(tokens.verify(token, other, AT), JSON.stringify(other)).toBe("invalid");
    // The address's case does not matter: contacts are matched case-insensitively.
    expect(tokens.verify(token, { ...binding, email: "Ada@Example.COM" }, AT)).toBe("valid");
  });

  it("refuse a tampered, truncated or reshaped token, even an expired one (the MAC is checked first)", () => {
    const token = tokens.issue(binding, AT);
    const [contactId, version, issuedAt, mac] = token.split(".");
    const later = String(Number(issuedAt) + 60);
    for (const bad of [
      "",
      "nonsense",
      tampered(token),
      token.slice(0, -1),
      `${contactId}.${version}.${later}.${mac}`,
      `${contactId}.3.${issuedAt}.${mac}`,
      `${contactId?.toUpperCase()}.${version}.${issuedAt}.${mac}`,
      `${token}.extra`,
    ]) {
      expect(tokens.verify(bad, binding, AT), bad).toBe("invalid");
    }
    expect(tokens.verify(tampered(token), binding, new Date(AT.getTime() + 2 * CONFIRMATION_MAX_AGE_MS))).toBe("invalid");
  });

  it("are keyed by the secret, under a label of their own", () => {
    const token = tokens.issue(binding, AT);
    expect(createConfirmationTokens("another-secret").verify(token, binding, AT)).toBe("invalid");
    // A CSRF token of the hosted page is no confirmation.
    const csrf = createFormTokens(SECRET).issue(binding.formId, AT);
    expect(tokens.read(csrf)).toBeUndefined();
    expect(tokens.verify(csrf, binding, AT)).toBe("invalid");
  });
});

describe("the sign-up door's client budget key", () => {
  it("counts an IPv6 client by its /64 and an IPv4 one as it is, however written", () => {
    expect(clientBudgetKey("2001:db8:1:2:aaaa::1")).toBe(clientBudgetKey("2001:db8:1:2:ffff:ffff:ffff:fffe"));
    expect(clientBudgetKey("2001:db8:1:3::1")).not.toBe(clientBudgetKey("2001:db8:1:2::1"));
    expect(clientBudgetKey("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(clientBudgetKey("198.51.100.7")).toBe("198.51.100.7");
  });
});
