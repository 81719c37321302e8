import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContactStatusName } from "../../../src/capabilities/contacts/index.ts";
import { fieldsNamed, openContactsHarness, type ContactsHarness } from "./harness.ts";

/**
 * The contact status rules (spec: Contact status rules), as a full matrix
 * against PostgreSQL: every starting status x every requested status x
 * with and without consent, each on a contact of its own.
 */
type Start = "new" | ContactStatusName;
type Requested = "none" | "subscribed" | "pending" | "unsubscribed";

const STARTS: readonly Start[] = ["new", "pending", "subscribed", "unsubscribed", "suppressed", "bounced", "complained"];
const REQUESTED: readonly Requested[] = ["none", "subscribed", "pending", "unsubscribed"];
const KEPT: readonly Start[] = ["unsubscribed", "suppressed", "bounced", "complained"];

/** The expected status, written out by hand from the rules (not computed by the code under test). */
function expected(start: Start, requested: Requested, consent: boolean): ContactStatusName | "400 consent" {
  if (requested === "subscribed" && !consent) return "400 consent";
  if (KEPT.includes(start)) return start as ContactStatusName;
  switch (requested) {
    case "subscribed":
      return "subscribed";
    case "pending":
      return "pending";
    case "unsubscribed":
      return "unsubscribed";
    case "none":
      if (consent) return "subscribed";
      return start === "new" ? "pending" : (start as ContactStatusName);
  }
}

const CASES = STARTS.flatMap((start) =>
  REQUESTED.flatMap((requested) => [true, false].map((consent) => ({ start, requested, consent, expect: expected(start, requested, consent) }))),
);

describe("contact status rules", () => {
  let h: ContactsHarness;
  let companyId: string;
  let n = 0;

  beforeAll(async () => {
    h = await openContactsHarness();
    companyId = await h.newCompany();
  });
  afterAll(async () => h?.close());

  /** A contact in `start`, reached only through the capability's own calls. */
  async function contactIn(start: Start): Promise<string> {
    const email = `case-${++n}@example.com`;
    if (start === "new") return email;
    const setup = await h.contacts.upsert({ companyId, email,
      firstName: "Before",
      ...(start === "subscribed" ? { consent: { source: "checkout" } } : {}),
      ...(start === "unsubscribed" ? { status: "unsubscribed" } : {}) });
    expect(setup.contact.status).toBe(start === "subscribed" ? "subscribed" : start === "unsubscribed" ? "unsubscribed" : "pending");
    const reason = { suppressed: "manual", bounced: "bounce", complained: "complaint" } as const;
    if (start === "suppressed" || start === "bounced" || start === "complained") {
      expect(await h.contacts.markFromSuppression({ companyId, email, reason: reason[start] })).toBe(true);
    }
    expect((await h.contacts.get({ companyId, idOrEmail: email })).status).toBe(start);
    return email;
  }

  it.each(CASES)("$start + status $requested, consent $consent -> $expect", async ({ start, requested, consent, expect: want }) => {
    const email = await contactIn(start);
    const write = {
      email,
      firstName: "After",
      ...(requested === "none" ? {} : { status: requested }),
      ...(consent ? { consent: { source: "signup-form", reference: "form-1" } } : {}),
    };
    if (want === "400 consent") {
      expect(await fieldsNamed(h.contacts.upsert({ companyId, ...write }))).toEqual(["consent"]);
      // Nothing of the refused write was kept.
      if (start !== "new") expect((await h.contacts.get({ companyId, idOrEmail: email })).firstName).toBe("Before");
      return;
    }
    const answer = await h.contacts.upsert({ companyId, ...write });
    expect(answer.created).toBe(start === "new");
    expect(answer.contact.status).toBe(want);
    expect(answer.marketable).toBe(want === "subscribed");
    // The other fields of the write apply whatever happens to the status.
    expect(answer.contact.firstName).toBe("After");
    if (consent) expect(answer.contact.consent).toMatchObject({ source: "signup-form", reference: "form-1" });
    // What the answer says is what is stored.
    expect(await h.contacts.get({ companyId, idOrEmail: answer.contact.id })).toEqual(answer.contact);
  });

  it.each(STARTS.flatMap((start) => (["suppressed", "bounced", "complained"] as const).map((status) => ({ start, status }))))(
    "a write asking for $status is refused naming status ($start contact)",
    async ({ start, status }) => {
      const email = await contactIn(start);
      for (const consent of [undefined, { source: "checkout" }]) {
        expect(await fieldsNamed(h.contacts.upsert({ companyId, email, status, consent }))).toEqual(["status"]);
      }
      if (start === "new") await expect(h.contacts.get({ companyId, idOrEmail: email })).rejects.toMatchObject({ code: "NOT_FOUND" });
      else expect((await h.contacts.get({ companyId, idOrEmail: email })).status).toBe(start);
    },
  );

  it("names an unknown status", async () => {
    expect(await fieldsNamed(h.contacts.upsert({ companyId, email: "x@example.com", status: "active" }))).toEqual(["status"]);
  });
});
