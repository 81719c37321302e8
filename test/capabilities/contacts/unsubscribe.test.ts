import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decideUnsubscribe } from "../../../src/capabilities/contacts/unsubscribe.ts";
import type { ContactRecord, ContactStatusName } from "../../../src/capabilities/contacts/types.ts";

const NOW = new Date("2026-03-01T10:00:00Z");

function contact(status: ContactStatusName): ContactRecord {
  return {
    id: randomUUID(),
    email: "ada@example.com",
    firstName: null,
    lastName: null,
    company: null,
    phone: null,
    locale: null,
    attributes: {},
    tags: [],
    listIds: [],
    status,
    consent: { source: "form:abc", at: new Date("2026-01-01T00:00:00Z"), reference: null },
    createdAt: new Date("2026-01-01T00:00:00Z"),
    updatedAt: new Date("2026-01-01T00:00:00Z"),
  };
}

describe("a recipient's unsubscribe", () => {
  it("moves subscribed and pending to unsubscribed, with the withdrawal as consent evidence and one contact.updated", () => {
    for (const status of ["subscribed", "pending"] as const) {
      const current = contact(status);
      const { kind, decision } = decideUnsubscribe(current, { method: "one-click", reference: "campaign:c1" }, "w1", NOW);
      expect(kind).toBe("unsubscribed");
      expect(decision.state.status).toBe("unsubscribed");
      expect(decision.state.consent).toEqual({ source: "unsubscribe:one-click", at: NOW, reference: "campaign:c1" });
      expect(decision.event?.data).toEqual({ contactId: current.id, email: "ada@example.com", status: "unsubscribed", source: "unsubscribe", change: "consent", occurredAt: NOW.toISOString() });
    }
  });

  it("changes nothing for unsubscribed, suppressed, bounced and complained", () => {
    expect(decideUnsubscribe(contact("unsubscribed"), { method: "page", reference: null }, "w", NOW).kind).toBe("already-unsubscribed");
    for (const status of ["suppressed", "bounced", "complained"] as const) {
      const current = contact(status);
      const { kind, decision } = decideUnsubscribe(current, { method: "mailto", reference: null }, "w", NOW);
      expect([kind, decision.event, decision.state]).toEqual(["kept", null, current]);
    }
  });
});
