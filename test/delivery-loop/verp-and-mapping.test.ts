import { describe, expect, it } from "vitest";
import { meaningOfDsn, meaningOfFeedback, meaningOfSesNotification } from "../../src/capabilities/delivery-reports/mapping.ts";
import { VerpAddresses } from "../../src/capabilities/delivery-reports/verp.ts";

const ID = "0f8fad5b-d9cb-469f-a165-70867728950e";

describe("VERP return paths", () => {
  const verp = new VerpAddresses("verp-secret-for-tests-0123456789");

  it("names the message, on the return-path domain, and reads it back", () => {
    const address = verp.addressFor(ID, "bounces.shop.example");
    expect(address).toMatch(/^b-0f8fad5bd9cb469fa16570867728950e[0-9a-f]{16}@bounces\.shop\.example$/);
    expect(verp.messageIdOf(address)).toBe(ID);
    // Relays may change the case of the local part.
    expect(verp.messageIdOf(address.toUpperCase())).toBe(ID);
  });

  it("refuses a changed message id, a changed MAC, another key's token and other addresses", () => {
    const address = verp.addressFor(ID, "bounces.shop.example");
    const otherId = address.replace("b-0f8f", "b-1f8f");
    const otherMac = address.replace(/[0-9a-f]@/, (m) => `${m[0] === "0" ? "1" : "0"}@`);
    expect(verp.messageIdOf(otherId)).toBeUndefined();
    expect(verp.messageIdOf(otherMac)).toBeUndefined();
    expect(new VerpAddresses("another-verp-secret-0123456789").messageIdOf(address)).toBeUndefined();
    for (const other of ["postmaster@bounces.shop.example", "b-@x", "", "b-0f8fad5bd9cb469fa16570867728950e@x"]) {
      expect(verp.messageIdOf(other)).toBeUndefined();
    }
  });

  it("refuses short keys and ids that are not UUIDs", () => {
    expect(() => new VerpAddresses("short")).toThrow(RangeError);
    expect(() => verp.addressFor("not-a-uuid", "bounces.x")).toThrow(TypeError);
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
