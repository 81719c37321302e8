import { describe, expect, it } from "vitest";
import { dkimMatches, dmarcMatches, mxMatches, spfMatches } from "../../../src/adapters/dns/dns-verifier.ts";
import { createSecretSealer } from "../../../src/capabilities/sending-setup/key-sealing.ts";

const KEY = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAabc+/def==";

describe("DNS record checks", () => {
  it("DKIM: our key in p=, chunks joined, whitespace ignored; wrong version or key type fails", () => {
    expect(dkimMatches([[`v=DKIM1; k=rsa; p=${KEY}`]], KEY)).toBe(true);
    expect(dkimMatches([["v=DKIM1; k=rsa; p=", KEY.slice(0, 10), KEY.slice(10)]], KEY)).toBe(true);
    expect(dkimMatches([[`p=${KEY.slice(0, 20)} ${KEY.slice(20)}`]], KEY)).toBe(true);
    expect(dkimMatches([["other"], [`v=DKIM1; p=${KEY}`]], KEY)).toBe(true);
    expect(dkimMatches([[`v=DKIM1; k=rsa; p=${KEY}x`]], KEY)).toBe(false);
    expect(dkimMatches([[`v=DKIM2; p=${KEY}`]], KEY)).toBe(false);
    expect(dkimMatches([[`v=DKIM1; k=ed25519; p=${KEY}`]], KEY)).toBe(false);
    expect(dkimMatches([[`v=DKIM1; k=rsa; p=`]], KEY)).toBe(false);
    expect(dkimMatches([], KEY)).toBe(false);
  });

  it("SPF: exactly one v=spf1 record that includes ours (case-insensitive, + qualifier, trailing dot)", () => {
    expect(spfMatches([["v=spf1 include:spf.mail.test -all"]], "spf.mail.test")).toBe(true);
    expect(spfMatches([["v=spf1 ip4:192.0.2.1 +include:SPF.Mail.Test. ~all"]], "spf.mail.test")).toBe(true);
    expect(spfMatches([["v=spf1 include:spf.", "mail.test -all"]], "spf.mail.test")).toBe(true);
    expect(spfMatches([["google-site-verification=x"], ["v=spf1 include:spf.mail.test -all"]], "spf.mail.test")).toBe(true);
    expect(spfMatches([["v=spf1 include:spf.mail.test.evil -all"]], "spf.mail.test")).toBe(false);
    expect(spfMatches([["v=spf1 -include:spf.mail.test -all"]], "spf.mail.test")).toBe(false);
    expect(spfMatches([["v=spf10 include:spf.mail.test"]], "spf.mail.test")).toBe(false);
    expect(spfMatches([["v=spf1 include:spf.mail.test -all"], ["v=spf1 -all"]], "spf.mail.test")).toBe(false);
  });

  it("MX: one of the exchanges is our bounce host", () => {
    expect(mxMatches([{ exchange: "backup.example" }, { exchange: "Feedback.Mail.Test." }], "feedback.mail.test")).toBe(true);
    expect(mxMatches([{ exchange: "feedback.mail.test.example" }], "feedback.mail.test")).toBe(false);
    expect(mxMatches([], "feedback.mail.test")).toBe(false);
  });

  it("DMARC: exactly one record starting with v=DMARC1", () => {
    expect(dmarcMatches([["v=DMARC1; p=none"]])).toBe(true);
    expect(dmarcMatches([["v = DMARC1 ;p=reject; rua=mailto:d@example.com"]])).toBe(true);
    expect(dmarcMatches([["v=DMARC1"]])).toBe(true);
    expect(dmarcMatches([["p=none; v=DMARC1"]])).toBe(false);
    expect(dmarcMatches([["v=dmarc1; p=none"]])).toBe(false);
    expect(dmarcMatches([["v=DMARC1; p=none"], ["v=DMARC1; p=reject"]])).toBe(false);
    expect(dmarcMatches([])).toBe(false);
  });
});

describe("secret sealing", () => {
  it("round-trips, uses a fresh IV each time, and refuses tampering, other contexts and other keys", () => {
    const sealer = createSecretSealer("k1");
    const a = sealer.seal("secret", "ctx");
    const b = sealer.seal("secret", "ctx");
    expect(a).not.toBe(b);
    expect(sealer.unseal(a, "ctx")).toBe("secret");
    expect(() => sealer.unseal(a, "ctx2")).toThrow();
    expect(() => createSecretSealer("k2").unseal(a, "ctx")).toThrow();
    const parts = a.split(".");
    const tampered = [...parts.slice(0, 3), Buffer.from("SECRET").toString("base64url")].join(".");
    expect(() => sealer.unseal(tampered, "ctx")).toThrow();
    expect(() => sealer.unseal("v2.a.b.c", "ctx")).toThrow(/format/);
    expect(() => createSecretSealer("")).toThrow();
  });
});
