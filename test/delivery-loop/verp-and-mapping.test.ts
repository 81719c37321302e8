import { describe, expect, it } from "vitest";
import { meaningOfDsn, meaningOfFeedback, meaningOfSesNotification } from "../../src/capabilities/delivery-reports/mapping.ts";
import type { DeliveryReportStore, InboundReport, KeptReport } from "../../src/capabilities/delivery-reports/ports.ts";
import { DeliveryReports } from "../../src/capabilities/delivery-reports/receive-reports.ts";
import { VerpAddresses } from "../../src/capabilities/delivery-reports/verp.ts";
import type { ProviderEvent } from "../../src/capabilities/messages/email-provider.ts";
import { idOnlyReturnPath } from "./harness.ts";

const ID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const KEY = "verp-secret-for-tests-0123456789";

describe("VERP return paths", () => {
  const verp = new VerpAddresses(KEY);

  it("names the message, on the return-path domain, and reads it back", () => {
    const address = verp.addressFor(ID, "bounces.shop.example");
    expect(address).toMatch(/^b-0f8fad5bd9cb469fa16570867728950e[0-9a-f]{16}@bounces\.shop\.example$/);
    expect(verp.read(address)).toEqual({ messageId: ID, domain: "bounces.shop.example", domainSigned: true });
    // Relays may change the case of the address.
    expect(verp.read(address.toUpperCase())).toEqual({ messageId: ID, domain: "bounces.shop.example", domainSigned: true });
  });

  it("refuses a genuine token on any other domain than the one it was made for", () => {
    const address = verp.addressFor(ID, "bounces.shop.example");
    const local = address.slice(0, address.indexOf("@"));
    for (const domain of ["evil.example", "bounces.evil.example", "bounces.other-shop.example", "shop.example", "bounces.shop.example.evil.example", ""]) {
      expect(verp.read(`${local}@${domain}`)).toBeUndefined();
    }
    // The same message on another return-path domain is another token.
    expect(verp.addressFor(ID, "bounces.other-shop.example")).not.toBe(`${local}@bounces.other-shop.example`);
  });

  it("refuses a changed message id, a changed MAC, another key's token and other addresses", () => {
    const address = verp.addressFor(ID, "bounces.shop.example");
    const otherId = address.replace("b-0f8f", "b-1f8f");
    const otherMac = address.replace(/[0-9a-f]@/, (m) => `${m[0] === "0" ? "1" : "0"}@`);
    expect(verp.read(otherId)).toBeUndefined();
    expect(verp.read(otherMac)).toBeUndefined();
    expect(new VerpAddresses("another-verp-secret-0123456789").read(address)).toBeUndefined();
    for (const other of ["postmaster@bounces.shop.example", "b-@x", "", "b-0f8fad5bd9cb469fa16570867728950e@x"]) {
      expect(verp.read(other)).toBeUndefined();
    }
  });

  it("reads an address of the older id-only form as such, for its domain to be checked against its message", () => {
    expect(verp.read(idOnlyReturnPath(ID, "bounces.shop.example", KEY))).toEqual({ messageId: ID, domain: "bounces.shop.example", domainSigned: false });
    expect(verp.read(idOnlyReturnPath(ID, "evil.example", KEY))).toEqual({ messageId: ID, domain: "evil.example", domainSigned: false });
    expect(verp.read(idOnlyReturnPath(ID, "bounces.shop.example", "another-verp-secret-0123456789"))).toBeUndefined();
  });

  it("refuses short keys and ids that are not UUIDs", () => {
    expect(() => new VerpAddresses("short")).toThrow(RangeError);
    expect(() => verp.addressFor("not-a-uuid", "bounces.x")).toThrow(TypeError);
  });
});

describe("DeliveryReports: a return path is ours only on the return-path domain its message left with", () => {
  const verp = new VerpAddresses(KEY);
  const OTHER_ID = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
  const kept: KeptReport[] = [];
  const events: ProviderEvent[] = [];
  const lookups: string[] = [];
  const store: DeliveryReportStore = {
    messageById: async (messageId) => {
      lookups.push(messageId);
      return messageId === ID
        ? { companyId: "c1", messageId, provider: "smtp", providerMessageId: `${messageId}@mail.test`, sendingDomain: "shop.example" }
        : undefined;
    },
    messageByProviderId: async () => undefined,
    keep: async (report) => void kept.push(report),
    list: async () => [],
  };
  const reports = new DeliveryReports({ verp, store, providerEvents: { report: async (event) => (events.push(event), { applied: true, messageId: ID }) } });
  const bounce: InboundReport = { kind: "dsn", recipients: [{ action: "failed", status: "5.1.1" }], originalMessageId: `<${ID}@mail.test>` };
  const summary = { excerpt: "" };

  it("takes a genuine address without reading the database, and refuses its token on a foreign domain", async () => {
    const genuine = verp.addressFor(ID, "bounces.shop.example");
    const foreign = genuine.replace("@bounces.shop.example", "@evil.example");
    lookups.length = 0;
    expect(await reports.isOurReturnPath({ address: genuine })).toBe(true);
    expect(await reports.isOurReturnPath({ address: foreign })).toBe(false);
    expect(lookups).toEqual([]);
  });

  it("takes an address of the older form only on its message's return-path domain", async () => {
    expect(await reports.isOurReturnPath({ address: idOnlyReturnPath(ID, "bounces.shop.example", KEY) })).toBe(true);
    expect(await reports.isOurReturnPath({ address: idOnlyReturnPath(ID, "BOUNCES.Shop.Example", KEY) })).toBe(true);
    for (const domain of ["evil.example", "bounces.evil.example", "shop.example", "bounces.other-shop.example"]) {
      expect(await reports.isOurReturnPath({ address: idOnlyReturnPath(ID, domain, KEY) })).toBe(false);
    }
    expect(await reports.isOurReturnPath({ address: idOnlyReturnPath(OTHER_ID, "bounces.shop.example", KEY) })).toBe(false);
  });

  it("never applies a report to a foreign-domain recipient, even past RCPT TO", async () => {
    const foreign = verp.addressFor(ID, "bounces.shop.example").replace("@bounces.shop.example", "@evil.example");
    for (const recipient of [foreign, idOnlyReturnPath(ID, "evil.example", KEY)]) {
      expect(await reports.receiveInbound({ recipients: [recipient], report: bounce, summary, receivedAt: new Date() })).toEqual(["unmatched"]);
    }
    expect(events).toEqual([]);
    expect(kept.map((k) => [k.kind, k.messageId])).toEqual([
      ["unmatched", undefined],
      ["unmatched", undefined],
    ]);
    const genuine = verp.addressFor(ID, "bounces.shop.example");
    expect(await reports.receiveInbound({ recipients: [genuine], report: bounce, summary, receivedAt: new Date() })).toEqual(["applied"]);
    expect(events.map((e) => [e.type, e.providerMessageId])).toEqual([["bounced", `${ID}@mail.test`]]);
  });
});

describe("the mapping tables (docs/delivery-loop.md)", () => {
  it("DSN action and status", () => {
    expect(meaningOfDsn("failed", "5.1.1")).toEqual({ kind: "event", type: "bounced" });
    expect(meaningOfDsn("Failed", "5.7.1 (policy)")).toEqual({ kind: "event", type: "bounced" });
    expect(meaningOfDsn("failed", "4.2.2")).toEqual({ kind: "noted", what: "soft_bounce" });
    expect(meaningOfDsn("delayed", "4.4.1")).toEqual({ kind: "noted", what: "delayed" });
    expect(meaningOfDsn("delivered", "2.0.0")).toEqual({ kind: "event", type: "delivered" });
    expect(meaningOfDsn("relayed", "2.0.0")).toEqual({ kind: "event", type: "delivered" });
    expect(meaningOfDsn("expanded", "2.0.0")).toEqual({ kind: "event", type: "delivered" });
    expect(meaningOfDsn("failed", "bogus").kind).toBe("unmatched");
    expect(meaningOfDsn("vanished", "5.0.0").kind).toBe("unmatched");
  });

  it("ARF feedback types: only abuse is a complaint", () => {
    expect(meaningOfFeedback("abuse")).toEqual({ kind: "event", type: "complained" });
    expect(meaningOfFeedback("not-spam").kind).toBe("unmatched");
    expect(meaningOfFeedback("virus").kind).toBe("unmatched");
  });

  it("SES notification types", () => {
    expect(meaningOfSesNotification("Delivery", undefined)).toEqual({ kind: "event", type: "delivered" });
    expect(meaningOfSesNotification("Bounce", "Permanent")).toEqual({ kind: "event", type: "bounced" });
    expect(meaningOfSesNotification("Bounce", "Transient")).toEqual({ kind: "noted", what: "soft_bounce" });
    expect(meaningOfSesNotification("Bounce", "Undetermined")).toEqual({ kind: "noted", what: "soft_bounce" });
    expect(meaningOfSesNotification("Complaint", undefined)).toEqual({ kind: "event", type: "complained" });
    expect(meaningOfSesNotification("Reject", undefined)).toEqual({ kind: "event", type: "rejected" });
    expect(meaningOfSesNotification("DeliveryDelay", undefined)).toEqual({ kind: "noted", what: "delayed" });
    expect(meaningOfSesNotification("Open", undefined)).toBe("ignored");
  });
});
