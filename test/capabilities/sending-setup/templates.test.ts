import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectApiError, OPERATOR_AUDIT } from "../accounts/harness.ts";
import { openSendingHarness, type SendingHarness } from "./harness.ts";

describe("templates", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await openSendingHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  it("creates, then replaces by name keeping the id and creation time", async () => {
    const companyId = await h.newCompany();
    const created = await h.setup.templates.put({ companyId, name: " welcome ", subject: "Hi {{ name }}", html: "<p>Hi</p>", audit: OPERATOR_AUDIT });
    expect(created).toMatchObject({ companyId, name: "welcome", subject: "Hi {{ name }}", html: "<p>Hi</p>", text: null });

    await new Promise((resolve) => setTimeout(resolve, 20));
    const replaced = await h.setup.templates.put({ companyId, name: "welcome", subject: "Hello", html: "<p>Hello</p>", text: "Hello", audit: OPERATOR_AUDIT });
    expect(replaced).toMatchObject({ id: created.id, subject: "Hello", html: "<p>Hello</p>", text: "Hello" });
    expect(replaced.createdAt.getTime()).toBe(created.createdAt.getTime());
    expect(replaced.updatedAt.getTime()).toBeGreaterThan(created.updatedAt.getTime());

    await h.setup.templates.put({ companyId, name: "a-first", subject: "s", html: "h", audit: OPERATOR_AUDIT });
    expect((await h.setup.templates.list({ companyId })).map((t) => [t.name, t.id === created.id])).toEqual([
      ["a-first", false],
      ["welcome", true],
    ]);
  });

  it("getTemplate finds by id or by name; NOT_FOUND names the templateId", async () => {
    const companyId = await h.newCompany();
    const created = await h.setup.templates.put({ companyId, name: "receipt", subject: "Receipt", html: "<b>x</b>", text: "x", audit: OPERATOR_AUDIT });
    const expected = { id: created.id, name: "receipt", subject: "Receipt", html: "<b>x</b>", text: "x" };
    expect(await h.setup.templates.getTemplate(companyId, created.id)).toEqual(expected);
    expect(await h.setup.templates.getTemplate(companyId, "receipt")).toEqual(expected);

    const noText = await h.setup.templates.put({ companyId, name: "plain", subject: "s", html: "h", audit: OPERATOR_AUDIT });
    expect(await h.setup.templates.getTemplate(companyId, noText.id)).not.toHaveProperty("text");

    // A name that looks like a UUID is still found by name.
    const uuidName = "11111111-1111-4111-8111-111111111111";
    const odd = await h.setup.templates.put({ companyId, name: uuidName, subject: "s", html: "h", audit: OPERATOR_AUDIT });
    expect((await h.setup.templates.getTemplate(companyId, uuidName)).id).toBe(odd.id);

    const error = await expectApiError(h.setup.templates.getTemplate(companyId, "nope"), "NOT_FOUND");
    expect(error.message).toContain("templateId");
    expect(error.message).toContain("nope");
    await expectApiError(h.setup.templates.getTemplate(companyId, "00000000-0000-4000-8000-000000000000"), "NOT_FOUND");
    await expectApiError(h.setup.templates.getTemplate(companyId, ""), "NOT_FOUND");
  });

  it("validates name, subject and bodies with the send limits", async () => {
    const companyId = await h.newCompany();
    const ok = { name: "t", subject: "s", html: "h" };
    for (const [input, field] of [
      [{ ...ok, name: "  " }, "name"],
      [{ ...ok, name: "x".repeat(201) }, "name"],
      [{ ...ok, subject: "" }, "subject"],
      [{ ...ok, subject: "a\r\nBcc: x@y.z" }, "subject"],
      [{ ...ok, subject: "s".repeat(501) }, "subject"],
      [{ ...ok, html: "" }, "html"],
      [{ ...ok, html: "h".repeat(400_001) }, "html"],
      [{ ...ok, text: "t".repeat(100_001) }, "text"],
    ] as const) {
      const error = await expectApiError(h.setup.templates.put({ companyId, ...input, audit: OPERATOR_AUDIT }), "VALIDATION_ERROR");
      expect(error.message.startsWith(`${field}: `)).toBe(true);
    }
    await expectApiError(h.setup.templates.put({ companyId: "00000000-0000-4000-8000-000000000000", ...ok, audit: OPERATOR_AUDIT }), "NOT_FOUND");
  });

  it("tenant isolation: B never sees or gets A's templates, and has its own namespace", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const mine = await h.setup.templates.put({ companyId: a, name: "shared-name", subject: "A", html: "A", audit: OPERATOR_AUDIT });
    expect(await h.setup.templates.list({ companyId: b })).toEqual([]);
    await expectApiError(h.setup.templates.getTemplate(b, mine.id), "NOT_FOUND");
    await expectApiError(h.setup.templates.getTemplate(b, "shared-name"), "NOT_FOUND");
    const theirs = await h.setup.templates.put({ companyId: b, name: "shared-name", subject: "B", html: "B", audit: OPERATOR_AUDIT });
    expect(theirs.id).not.toBe(mine.id);
    expect((await h.setup.templates.getTemplate(a, "shared-name")).subject).toBe("A");
    expect((await h.setup.templates.getTemplate(b, "shared-name")).subject).toBe("B");
  });
});
