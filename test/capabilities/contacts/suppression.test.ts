import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContactsHarness, type ContactsHarness } from "./harness.ts";

/**
 * markContactFromSuppression: what the sending lifecycle calls when an
 * address bounces hard or complains (and an operator's manual suppression).
 */
describe("contacts moved by suppressions", () => {
  let h: ContactsHarness;

  beforeAll(async () => {
    h = await openContactsHarness();
  });
  afterAll(async () => h?.close());

  it("moves the matching contact to bounced, complained or suppressed, matching the address in any spelling", async () => {
    const companyId = await h.newCompany();
    await h.contacts.upsertContact(companyId, { email: "b@bücher.example", consent: { source: "x" } });
    await h.contacts.upsertContact(companyId, { email: "c@example.com", status: "unsubscribed" });
    await h.contacts.upsertContact(companyId, { email: "m@example.com" });

    expect(await h.contacts.markContactFromSuppression(companyId, "B@XN--BCHER-KVA.EXAMPLE", "bounce")).toBe(true);
    expect(await h.contacts.markContactFromSuppression(companyId, " C@example.com", "complaint")).toBe(true);
    expect(await h.contacts.markContactFromSuppression(companyId, "m@example.com", "manual")).toBe(true);

    expect((await h.contacts.getContact(companyId, "b@bücher.example")).status).toBe("bounced");
    expect((await h.contacts.getContact(companyId, "c@example.com")).status).toBe("complained");
    expect((await h.contacts.getContact(companyId, "m@example.com")).status).toBe("suppressed");
  });

  it("keeps the first service status, creates no contact and touches no other company", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany();
    await h.contacts.upsertContact(companyId, { email: "x@example.com" });
    await h.contacts.upsertContact(other, { email: "x@example.com" });

    expect(await h.contacts.markContactFromSuppression(companyId, "x@example.com", "bounce")).toBe(true);
    expect(await h.contacts.markContactFromSuppression(companyId, "x@example.com", "complaint")).toBe(false);
    expect((await h.contacts.getContact(companyId, "x@example.com")).status).toBe("bounced");
    expect((await h.contacts.getContact(other, "x@example.com")).status).toBe("pending");

    expect(await h.contacts.markContactFromSuppression(companyId, "nobody@example.com", "bounce")).toBe(false);
    await expect(h.contacts.getContact(companyId, "nobody@example.com")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await h.contacts.markContactFromSuppression("not-a-company", "x@example.com", "bounce")).toBe(false);
  });

  it("the marked status then holds against API writes, which still update the other fields", async () => {
    const companyId = await h.newCompany();
    await h.contacts.upsertContact(companyId, { email: "held@example.com" });
    await h.contacts.markContactFromSuppression(companyId, "held@example.com", "complaint");
    const answer = await h.contacts.upsertContact(companyId, {
      email: "held@example.com",
      firstName: "Still",
      status: "subscribed",
      consent: { source: "checkout" },
    });
    expect(answer).toMatchObject({ created: false, marketable: false, contact: { status: "complained", firstName: "Still" } });
  });
});
