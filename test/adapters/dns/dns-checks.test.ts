import { describe, expect, it } from "vitest";
import { dkimMatches, dmarcMatches, mxMatches, spfMatches } from "../../../src/adapters/dns/dns-verifier.ts";

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
