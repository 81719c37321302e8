import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SignupFormDraft } from "../../../src/capabilities/forms/index.ts";
import { apiErrorOf, AUDIT, fieldsNamed } from "../contacts/harness.ts";
import { openFormsHarness, type FormsHarness } from "./harness.ts";

function draft(overrides: Partial<SignupFormDraft> = {}): SignupFormDraft {
  return {
    name: "Newsletter",
    fields: [
      { name: "email", label: "Email", type: "email", required: true },
      { name: "firstName", label: "First name", type: "text", required: false },
      { name: "topic", label: "Topic", type: "select", required: false, options: ["News", "Offers"] },
      { name: "terms", label: "I accept", type: "checkbox", required: true },
    ],
    consentText: "Send me the newsletter. I can unsubscribe at any time.",
    doubleOptIn: true,
    language: "de-ch",
    ...overrides,
  };
}

describe("sign-up forms (GET /mail/v1/forms, SignupFormsService CreateForm / DeactivateForm)", () => {
  let h: FormsHarness;

  beforeAll(async () => {
    h = await openFormsHarness();
  });
  afterAll(async () => h?.close());

  it("creates a form with a random URL-safe public id and its hosted page address", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft({ name: "  Newsletter  " }), audit: AUDIT });
    expect(form.publicId).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(form).toMatchObject({
      name: "Newsletter",
      consentText: "Send me the newsletter. I can unsubscribe at any time.",
      doubleOptIn: true,
      // Canonical BCP 47.
      language: "de-CH",
      active: true,
      url: `https://mail.example.test/mail/v1/forms/${form.publicId}`,
    });
    expect(form.fields).toEqual([
      { name: "email", label: "Email", type: "email", required: true, options: [] },
      { name: "firstName", label: "First name", type: "text", required: false, options: [] },
      { name: "topic", label: "Topic", type: "select", required: false, options: ["News", "Offers"] },
      { name: "terms", label: "I accept", type: "checkbox", required: true, options: [] },
    ]);
    const second = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    expect(second.publicId).not.toBe(form.publicId);
  });

  it("lists the company's active forms, oldest first, with what GET /mail/v1/forms shows", async () => {
    const companyId = await h.newCompany();
    const a = await h.forms.create({ companyId, ...draft({ name: "A" }), audit: AUDIT });
    const b = await h.forms.create({ companyId, ...draft({ name: "B", doubleOptIn: false, language: "en" }), audit: AUDIT });
    const listed = await h.forms.listActive({ companyId });
    expect(listed.map((f) => f.name)).toEqual(["A", "B"]);
    expect(listed[1]).toEqual(b);
    expect(listed[0]?.url).toBe(a.url);
  });

  it("deactivates a form: it leaves the list, stays inactive when deactivated again", async () => {
    const companyId = await h.newCompany();
    const a = await h.forms.create({ companyId, ...draft({ name: "A" }), audit: AUDIT });
    const b = await h.forms.create({ companyId, ...draft({ name: "B" }), audit: AUDIT });
    const off = await h.forms.deactivate({ companyId, publicId: a.publicId, audit: AUDIT });
    expect(off).toMatchObject({ publicId: a.publicId, active: false });
    expect((await h.forms.listActive({ companyId })).map((f) => f.publicId)).toEqual([b.publicId]);
    expect(await h.forms.deactivate({ companyId, publicId: a.publicId, audit: AUDIT })).toMatchObject({ publicId: a.publicId, active: false });
    // The hosted page finds only active forms.
    expect(await h.forms.findActive({ publicId: a.publicId })).toBeUndefined();
    expect(await h.forms.findActive({ publicId: b.publicId })).toMatchObject({ publicId: b.publicId, companyId });
  });

  it("never lists or deactivates another company's form", async () => {
    const mine = await h.newCompany();
    const theirs = await h.newCompany();
    const form = await h.forms.create({ companyId: theirs, ...draft(), audit: AUDIT });
    expect(await h.forms.listActive({ companyId: mine })).toEqual([]);
    await apiErrorOf(h.forms.deactivate({ companyId: mine, publicId: form.publicId, audit: AUDIT }), "NOT_FOUND");
    await apiErrorOf(h.forms.deactivate({ companyId: mine, publicId: "no/such id", audit: AUDIT }), "NOT_FOUND");
    expect((await h.forms.listActive({ companyId: theirs })).map((f) => f.publicId)).toEqual([form.publicId]);
  });

  it("draws another public id when the first is taken", async () => {
    const companyId = await h.newCompany();
    h.nextPublicIds.push("takenId-12345678", "takenId-12345678", "freshId-12345678");
    expect((await h.forms.create({ companyId, ...draft(), audit: AUDIT })).publicId).toBe("takenId-12345678");
    expect((await h.forms.create({ companyId, ...draft(), audit: AUDIT })).publicId).toBe("freshId-12345678");
  });

  it("names every bad part of a form design", async () => {
    const companyId = await h.newCompany();
    expect(
      await fieldsNamed(
        h.forms.create({ companyId, name: " ",
          consentText: "",
          doubleOptIn: false,
          language: "not a tag!",
          fields: [
            { name: "email", label: "Email", type: "text", required: true },
            { name: "1bad", label: "x", type: "text", required: false },
            { name: "color", label: "Colour", type: "select", required: false, options: [] },
            { name: "nick", label: "Nick", type: "radio", required: false },
            { name: "Nick", label: "", type: "text", required: false, options: ["a"] },
          ], audit: AUDIT }),
      ),
    ).toEqual([
      "name",
      "consentText",
      "language",
      "fields[0]",
      "fields[1].name",
      "fields[2].options",
      "fields[3].type",
      "fields[4].name",
      "fields[4].label",
      "fields[4].options",
    ]);
    // A form without an email field could not create a contact.
    expect(await fieldsNamed(h.forms.create({ companyId, ...draft({ fields: [{ name: "firstName", label: "Name", type: "text", required: true }] }), audit: AUDIT }))).toEqual([
      "fields",
    ]);
    expect(await h.forms.listActive({ companyId })).toEqual([]);
  });
});
