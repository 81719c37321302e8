import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectApiError } from "../accounts/harness.ts";
import { openSendingHarness, type SendingHarness } from "../sending-setup/harness.ts";

describe("suppressions", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await openSendingHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  it("suppresses an address case-insensitively, stored lower-cased", async () => {
    const companyId = await h.newCompany();
    const message = randomUUID();
    expect(await h.suppressions.isSuppressed({ companyId, email: "Bob@Example.COM" })).toBe(false);
    expect(await h.suppressions.suppress({ companyId, email: " Bob@Example.COM ", reason: "bounce", messageId: message })).toBe(true);
    for (const spelling of ["bob@example.com", "BOB@EXAMPLE.COM", "Bob@example.com"]) {
      expect(await h.suppressions.isSuppressed({ companyId, email: spelling })).toBe(true);
    }
    expect(await h.suppressions.isSuppressed({ companyId, email: "alice@example.com" })).toBe(false);
    const list = await h.suppressions.list({ companyId });
    expect(list).toEqual([{ email: "bob@example.com", reason: "bounce", messageId: message, createdAt: expect.any(Date) }]);
  });

  it("matches internationalised domains in either spelling", async () => {
    const companyId = await h.newCompany();
    await h.suppressions.suppress({ companyId, email: "kim@Bücher.example", reason: "complaint" });
    expect(await h.suppressions.isSuppressed({ companyId, email: "kim@xn--bcher-kva.example" })).toBe(true);
    expect((await h.suppressions.list({ companyId }))[0]?.email).toBe("kim@xn--bcher-kva.example");
  });

  it("is idempotent and keeps the first reason, whatever the spelling of later reports", async () => {
    const companyId = await h.newCompany();
    const first = randomUUID();
    expect(await h.suppressions.suppress({ companyId, email: "x@example.com", reason: "bounce", messageId: first })).toBe(true);
    expect(await h.suppressions.suppress({ companyId, email: "X@example.com", reason: "complaint", messageId: randomUUID() })).toBe(false);
    expect(await h.suppressions.list({ companyId })).toMatchObject([{ email: "x@example.com", reason: "bounce", messageId: first }]);
  });

  it("removes an address (any spelling); false when it was not listed", async () => {
    const companyId = await h.newCompany();
    await h.suppressions.suppress({ companyId, email: "gone@example.com", reason: "manual" });
    expect(await h.suppressions.remove({ companyId, email: "GONE@example.com" })).toBe(true);
    expect(await h.suppressions.remove({ companyId, email: "gone@example.com" })).toBe(false);
    expect(await h.suppressions.isSuppressed({ companyId, email: "gone@example.com" })).toBe(false);
  });

  it("validates reason, address and message id; unknown companies are NOT_FOUND", async () => {
    const companyId = await h.newCompany();
    await expectApiError(h.suppressions.suppress({ companyId, email: "a@example.com", reason: "spam" as "manual" }), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.suppress({ companyId, email: "no-at-sign", reason: "manual" }), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.suppress({ companyId, email: "a@example.com", reason: "bounce", messageId: "m-1" }), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.list({ companyId: "00000000-0000-4000-8000-000000000000" }), "NOT_FOUND");
    await expectApiError(h.suppressions.remove({ companyId: "00000000-0000-4000-8000-000000000000", email: "a@example.com" }), "NOT_FOUND");
  });

  it("tenant isolation: one company's list never affects another's", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    await h.suppressions.suppress({ companyId: a, email: "shared@example.com", reason: "complaint" });
    expect(await h.suppressions.isSuppressed({ companyId: b, email: "shared@example.com" })).toBe(false);
    expect(await h.suppressions.list({ companyId: b })).toEqual([]);
    expect(await h.suppressions.remove({ companyId: b, email: "shared@example.com" })).toBe(false);
    expect(await h.suppressions.isSuppressed({ companyId: a, email: "shared@example.com" })).toBe(true);
  });
});
