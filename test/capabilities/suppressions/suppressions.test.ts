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
    expect(await h.suppressions.isSuppressed(companyId, "Bob@Example.COM")).toBe(false);
    expect(await h.suppressions.suppress(companyId, " Bob@Example.COM ", "bounce", message)).toBe(true);
    for (const spelling of ["bob@example.com", "BOB@EXAMPLE.COM", "Bob@example.com"]) {
      expect(await h.suppressions.isSuppressed(companyId, spelling)).toBe(true);
    }
    expect(await h.suppressions.isSuppressed(companyId, "alice@example.com")).toBe(false);
    const list = await h.suppressions.list(companyId);
    expect(list).toEqual([{ email: "bob@example.com", reason: "bounce", messageId: message, createdAt: expect.any(Date) }]);
  });

  it("matches internationalised domains in either spelling", async () => {
    const companyId = await h.newCompany();
    await h.suppressions.suppress(companyId, "kim@Bücher.example", "complaint");
    expect(await h.suppressions.isSuppressed(companyId, "kim@xn--bcher-kva.example")).toBe(true);
    expect((await h.suppressions.list(companyId))[0]?.email).toBe("kim@xn--bcher-kva.example");
  });

  it("is idempotent and keeps the first reason, whatever the spelling of later reports", async () => {
    const companyId = await h.newCompany();
    const first = randomUUID();
    expect(await h.suppressions.suppress(companyId, "x@example.com", "bounce", first)).toBe(true);
    expect(await h.suppressions.suppress(companyId, "X@example.com", "complaint", randomUUID())).toBe(false);
    expect(await h.suppressions.list(companyId)).toMatchObject([{ email: "x@example.com", reason: "bounce", messageId: first }]);
  });

  it("removes an address (any spelling); false when it was not listed", async () => {
    const companyId = await h.newCompany();
    await h.suppressions.suppress(companyId, "gone@example.com", "manual");
    expect(await h.suppressions.remove(companyId, "GONE@example.com")).toBe(true);
    expect(await h.suppressions.remove(companyId, "gone@example.com")).toBe(false);
    expect(await h.suppressions.isSuppressed(companyId, "gone@example.com")).toBe(false);
  });

  it("validates reason, address and message id; unknown companies are NOT_FOUND", async () => {
    const companyId = await h.newCompany();
    await expectApiError(h.suppressions.suppress(companyId, "a@example.com", "spam" as "manual"), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.suppress(companyId, "no-at-sign", "manual"), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.suppress(companyId, "a@example.com", "bounce", "m-1"), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.list("00000000-0000-4000-8000-000000000000"), "NOT_FOUND");
    await expectApiError(h.suppressions.remove("00000000-0000-4000-8000-000000000000", "a@example.com"), "NOT_FOUND");
  });

  it("tenant isolation: one company's list never affects another's", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    await h.suppressions.suppress(a, "shared@example.com", "complaint");
    expect(await h.suppressions.isSuppressed(b, "shared@example.com")).toBe(false);
    expect(await h.suppressions.list(b)).toEqual([]);
    expect(await h.suppressions.remove(b, "shared@example.com")).toBe(false);
    expect(await h.suppressions.isSuppressed(a, "shared@example.com")).toBe(true);
  });
});
