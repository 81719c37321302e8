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
    await h.contacts.upsert({ companyId, email: "b@bücher.example", consent: { source: "x" } });
    await h.contacts.upsert({ companyId, email: "c@example.com", status: "unsubscribed" });
    await h.contacts.upsert({ companyId, email: "m@example.com" });

    expect(await h.contacts.markFromSuppression({ companyId, email: "B@XN--BCHER-KVA.EXAMPLE", reason: "bounce" })).toBe(true);
    expect(await h.contacts.markFromSuppression({ companyId, email: " C@example.com", reason: "complaint" })).toBe(true);
    expect(await h.contacts.markFromSuppression({ companyId, email: "m@example.com", reason: "manual" })).toBe(true);

    expect((await h.contacts.get({ companyId, idOrEmail: "b@bücher.example" })).status).toBe("bounced");
    expect((await h.contacts.get({ companyId, idOrEmail: "c@example.com" })).status).toBe("complained");
    expect((await h.contacts.get({ companyId, idOrEmail: "m@example.com" })).status).toBe("suppressed");
  });

  it("keeps the first service status, creates no contact and touches no other company", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany();
    await h.contacts.upsert({ companyId, email: "x@example.com" });
    await h.contacts.upsert({ companyId: other, email: "x@example.com" });

    expect(await h.contacts.markFromSuppression({ companyId, email: "x@example.com", reason: "bounce" })).toBe(true);
    expect(await h.contacts.markFromSuppression({ companyId, email: "x@example.com", reason: "complaint" })).toBe(false);
    expect((await h.contacts.get({ companyId, idOrEmail: "x@example.com" })).status).toBe("bounced");
    expect((await h.contacts.get({ companyId: other, idOrEmail: "x@example.com" })).status).toBe("pending");

    expect(await h.contacts.markFromSuppression({ companyId, email: "nobody@example.com", reason: "bounce" })).toBe(false);
    await expect(h.contacts.get({ companyId, idOrEmail: "nobody@example.com" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await h.contacts.markFromSuppression({ companyId: "not-a-company", email: "x@example.com", reason: "bounce" })).toBe(false);
  });

  it("the marked status then holds against API writes, which still update the other fields", async () => {
    const companyId = await h.newCompany();
    await h.contacts.upsert({ companyId, email: "held@example.com" });
    await h.contacts.markFromSuppression({ companyId, email: "held@example.com", reason: "complaint" });
    const answer = await h.contacts.upsert({ companyId, email: "held@example.com",
      firstName: "Still",
      status: "subscribed",
      consent: { source: "checkout" } });
    expect(answer).toMatchObject({ created: false, marketable: false, contact: { status: "complained", firstName: "Still" } });
  });
});
