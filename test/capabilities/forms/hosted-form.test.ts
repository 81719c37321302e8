import fc from "fast-check";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublishedForm, SignupFormDraft } from "../../../src/capabilities/forms/index.ts";
import { FixedWindowRateLimiter, type RateLimitWindows } from "../../../src/capabilities/rate-limit/index.ts";
import { registerHostedForms } from "../../../src/transport/http/hosted-forms/index.ts";
import { createContactsCapability } from "../../../src/wiring/contacts.ts";
import { createHostedSignupCapability } from "../../../src/wiring/forms.ts";
import { AUDIT, CURSOR_SECRET } from "../contacts/harness.ts";
import { openFormsHarness, type FormsHarness } from "./harness.ts";

/** One window that never ends: the per-address budget is spent for the whole test (no minute boundary to race). */
class EndlessWindows implements RateLimitWindows {
  readonly #counts = new Map<string, number>();
  async add(bucket: string) {
    const count = (this.#counts.get(bucket) ?? 0) + 1;
    this.#counts.set(bucket, count);
    return { count, resetMs: 42_000 };
  }
  async close() {}
}

function draft(overrides: Partial<SignupFormDraft> = {}): SignupFormDraft {
  return {
    name: "Neuigkeiten",
    fields: [
      { name: "email", label: "E-Mail", type: "email", required: true },
      { name: "firstName", label: "Vorname", type: "text", required: false },
      { name: "topic", label: "Thema", type: "select", required: true, options: ["News", "Angebote"] },
      { name: "terms", label: "Ich stimme zu", type: "checkbox", required: true },
    ],
    consentText: "Ja, schickt mir den Newsletter.",
    doubleOptIn: true,
    language: "de",
    ...overrides,
  };
}

/** The token with one bit of its signature's first byte flipped. */
function forged(token: string): string {
  const [issuedAt, nonce, signature] = token.split(".");
  const bytes = Buffer.from(signature ?? "", "base64url");
  bytes[0] = (bytes[0] ?? 0) ^ 1;
  return `${issuedAt}.${nonce}.${bytes.toString("base64url")}`;
}

function tokenOf(html: string): string {
  const token = /name="_token" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error("no token in the page");
  return token;
}

describe("the hosted sign-up form (GET/POST /mail/v1/forms/{publicId})", () => {
  let h: FormsHarness;
  let app: FastifyInstance;
  const contactsOf = () => createContactsCapability(h.orm, { cursorSecret: CURSOR_SECRET }).contacts;

  beforeAll(async () => {
    h = await openFormsHarness();
    app = Fastify();
    const signup = createHostedSignupCapability({
      forms: h.forms,
      contacts: contactsOf(),
      rateLimiter: new FixedWindowRateLimiter(new EndlessWindows()),
      tokenSecret: "test-form-token-secret",
      orm: h.orm,
      // This file's visitors all post from one address: the door's own budgets are tested in test/hostile/signup-storm.test.ts.
      limits: { perClientPerMinute: 10_000, perFormPerMinute: 10_000, perCompanyPerMinute: 10_000 },
    });
    await registerHostedForms(app, { signup });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await h?.close();
  });

  async function open(form: PublishedForm): Promise<string> {
    const page = await app.inject({ method: "GET", url: `/mail/v1/forms/${form.publicId}` });
    expect(page.statusCode).toBe(200);
    return page.body;
  }

  function post(form: PublishedForm, fields: Record<string, string>, ip = "203.0.113.7") {
    return app.inject({
      method: "POST",
      url: `/mail/v1/forms/${form.publicId}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams(fields).toString(),
      remoteAddress: ip,
    });
  }

  it("serves an accessible page in the form's language with a token and a honeypot", async () => {
    const form = await h.forms.create({ companyId: await h.newCompany(), ...draft(), audit: AUDIT });
    const page = await app.inject({ method: "GET", url: `/mail/v1/forms/${form.publicId}` });
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain('<html lang="de">');
    expect(page.body).toContain('<label for="f0">E-Mail</label><input type="email" id="f0" name="email"');
    expect(page.body).toContain('<option value="Angebote">Angebote</option>');
    expect(page.body).toContain("Ja, schickt mir den Newsletter.");
    expect(page.body).toContain(">Anmelden</button>");
    expect(page.body).toMatch(/<div class="hp" aria-hidden="true">.*name="_website" value="" tabindex="-1"/);
    expect(tokenOf(page.body)).toMatch(/^\d+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
  });

  it("creates a pending contact with the consent evidence (double opt-in)", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const answer = await post(form, { _token: tokenOf(await open(form)), _website: "", email: "Ada@Example.com", firstName: "Ada", topic: "News", terms: "yes" });
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain("bestätigen Sie Ihre Adresse");
    const contact = await contactsOf().get({ companyId, idOrEmail: "ada@example.com" });
    expect(contact).toMatchObject({
      status: "pending",
      firstName: "Ada",
      attributes: { topic: "News", terms: true },
      consent: { source: `form:${form.publicId}`, reference: "consent text v1; ip 203.0.113.7" },
    });
  });

  it("subscribes at once on a single opt-in form, and never overwrites an unsubscribed contact", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft({ doubleOptIn: false, language: "en" }), audit: AUDIT });
    const fields = { email: "bob@example.com", topic: "News", terms: "yes" };
    const answer = await post(form, { _token: tokenOf(await open(form)), ...fields });
    expect(answer.body).toContain("Thank you for signing up!");
    expect((await contactsOf().get({ companyId, idOrEmail: "bob@example.com" })).status).toBe("subscribed");

    await contactsOf().upsert({ companyId, email: "carol@example.com", status: "unsubscribed" });
    expect((await post(form, { _token: tokenOf(await open(form)), ...fields, email: "carol@example.com" })).statusCode).toBe(200);
    expect((await contactsOf().get({ companyId, idOrEmail: "carol@example.com" })).status).toBe("unsubscribed");
  });

  it("refuses a missing, forged or other form's token and serves the page again with a fresh one", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const other = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const fields = { email: "dan@example.com", topic: "News", terms: "yes" };
    const valid = tokenOf(await open(form));
    for (const token of ["", forged(valid), tokenOf(await open(other)), `${Date.now() - 3 * 3600_000}.${valid.split(".").slice(1).join(".")}`]) {
      const answer = await post(form, { _token: token, ...fields });
      expect(answer.statusCode, token).toBe(403);
      expect(answer.body).toContain('role="alert"');
      expect(tokenOf(answer.body)).not.toBe(token);
    }
    await expect(contactsOf().get({ companyId, idOrEmail: "dan@example.com" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("thanks a bot that filled the honeypot but writes nothing", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const answer = await post(form, { _token: tokenOf(await open(form)), _website: "http://spam.example", email: "bot@example.com", topic: "News", terms: "yes" });
    expect(answer.statusCode).toBe(200);
    await expect(contactsOf().get({ companyId, idOrEmail: "bot@example.com" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("names the refused fields, keeping what the visitor typed", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const answer = await post(form, { _token: tokenOf(await open(form)), email: "eve@example.com", firstName: "<Eve>", topic: "Other" });
    expect(answer.statusCode).toBe(400);
    expect(answer.body).toContain('id="f2" name="topic" required aria-required="true" aria-invalid="true" aria-describedby="f2-error"');
    expect(answer.body).toContain('<p class="error" id="f3-error">Dieses Feld ist erforderlich.</p>');
    expect(answer.body).toContain('value="&#60;Eve&#62;"');
    const bad = await post(form, { _token: tokenOf(await open(form)), email: "not an address", topic: "News", terms: "yes" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("Bitte eine gültige E-Mail-Adresse eingeben.");
  });

  it("limits sign-ups per address, whatever the spelling", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const fields = { topic: "News", terms: "yes" };
    for (const email of ["fay@example.com", "FAY@example.com", "fay@example.com"]) {
      expect((await post(form, { _token: tokenOf(await open(form)), email, ...fields })).statusCode).toBe(200);
    }
    const limited = await post(form, { _token: tokenOf(await open(form)), email: "Fay@Example.com", ...fields });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBe("42");
    // Another address is not limited.
    expect((await post(form, { _token: tokenOf(await open(form)), email: "gus@example.com", ...fields })).statusCode).toBe(200);
  });

  it("is 404 for an unknown or deactivated form", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const token = tokenOf(await open(form));
    await h.forms.deactivate({ companyId, publicId: form.publicId, audit: AUDIT });
    expect((await app.inject({ method: "GET", url: `/mail/v1/forms/${form.publicId}` })).statusCode).toBe(404);
    expect((await post(form, { _token: token, email: "hal@example.com", topic: "News", terms: "yes" })).statusCode).toBe(404);
    expect((await app.inject({ method: "GET", url: "/mail/v1/forms/nope" })).statusCode).toBe(404);
  });

  it("takes each token once: a replayed token gets the page again with a fresh token, and writes nothing", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const token = tokenOf(await open(form));
    const fields = { topic: "News", terms: "yes" };
    expect((await post(form, { _token: token, email: "ivy@example.com", ...fields })).statusCode).toBe(200);
    const replayed = await post(form, { _token: token, email: "jon@example.com", ...fields });
    expect(replayed.statusCode).toBe(403);
    expect(tokenOf(replayed.body)).not.toBe(token);
    await expect(contactsOf().get({ companyId, idOrEmail: "jon@example.com" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Two pages served in the same millisecond still carry two tokens.
    const pages = await Promise.all([1, 2, 3].map(() => open(form)));
    expect(new Set(pages.map(tokenOf)).size).toBe(3);
  });

  it("never changes an existing contact, and answers a known address with the very same page as a new one", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.create({ companyId, ...draft({ doubleOptIn: true }), audit: AUDIT });
    const known = await contactsOf().upsert({ companyId, email: "kim@example.com",
      firstName: "Kim",
      attributes: { plan: "gold", topic: "Angebote" },
      status: "subscribed",
      consent: { source: "checkout", reference: "order 17" } });
    const before = await contactsOf().get({ companyId, idOrEmail: "kim@example.com" });
    const forKnown = await post(form, { _token: tokenOf(await open(form)), email: "kim@example.com", firstName: "Mallory", topic: "News", terms: "yes" });
    const forNew = await post(form, { _token: tokenOf(await open(form)), email: "lea@example.com", firstName: "Lea", topic: "News", terms: "yes" });
    expect(forKnown.statusCode).toBe(200);
    expect(forNew.statusCode).toBe(200);
    expect(forKnown.body).toBe(forNew.body);
    const after = await contactsOf().get({ companyId, idOrEmail: "kim@example.com" });
    expect(after).toEqual(before);
    expect(after).toMatchObject({ id: known.contact.id, firstName: "Kim", attributes: { plan: "gold", topic: "Angebote" }, consent: { source: "checkout" } });
    // A pending contact stays as it was too (its owner's confirmation subscribes it; see test/api/double-opt-in.test.ts).
    await contactsOf().upsert({ companyId, email: "max@example.com", firstName: "Max", attributes: { plan: "free" } });
    const pendingBefore = await contactsOf().get({ companyId, idOrEmail: "max@example.com" });
    const forPending = await post(form, { _token: tokenOf(await open(form)), email: "max@example.com", firstName: "Eve", topic: "News", terms: "yes" });
    expect(forPending.body).toBe(forNew.body);
    expect(await contactsOf().get({ companyId, idOrEmail: "max@example.com" })).toEqual(pendingBefore);
  });

  it("answers an unreadable body with an HTML page, never JSON", async () => {
    const form = await h.forms.create({ companyId: await h.newCompany(), ...draft(), audit: AUDIT });
    const tooBig = await app.inject({
      method: "POST",
      url: `/mail/v1/forms/${form.publicId}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: `email=${"a".repeat(20_000)}`,
    });
    const odd = await app.inject({ method: "POST", url: `/mail/v1/forms/${form.publicId}`, headers: { "content-type": "text/csv" }, payload: "a,b" });
    for (const answer of [tooBig, odd]) {
      expect(answer.statusCode).toBeGreaterThanOrEqual(400);
      expect(answer.statusCode).toBeLessThan(500);
      expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(answer.body).toContain("<!doctype html>");
    }
  });

  describe("field names that every JavaScript object already has", () => {
    const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

    it("are refused when a form is made, with a 400 naming the field", async () => {
      const companyId = await h.newCompany();
      for (const name of ["valueOf", "constructor", "toString", "hasOwnProperty", "__proto__", "isPrototypeOf", "ValueOf"]) {
        const fields = [...draft().fields, { name, label: "Odd", type: "checkbox", required: false }];
        const refused = h.forms.create({ companyId, ...draft({ fields }), audit: AUDIT });
        await expect(refused, name).rejects.toMatchObject({ code: "VALIDATION_ERROR", fields: [{ field: `fields[${fields.length - 1}].name` }] });
      }
    });

    it("of a form stored before the rule answer 200 when left unchecked, not 500", async () => {
      const companyId = await h.newCompany();
      const form = await h.forms.create({ companyId, ...draft({ doubleOptIn: false, language: "en" }), audit: AUDIT });
      const legacy = [...form.fields, ...["valueOf", "constructor", "toString", "__proto__"].map((name) => ({ name, label: name, type: "checkbox", required: false, options: [] }))];
      await h.db.query(`update signup_form set fields = $2::jsonb where id = $1`, [form.id, JSON.stringify(legacy)]);
      const answer = await post(form, { _token: tokenOf(await open(form)), email: "ned@example.com", topic: "News", terms: "yes" });
      expect(answer.statusCode).toBe(200);
      const contact = await contactsOf().get({ companyId, idOrEmail: "ned@example.com" });
      expect(Object.getPrototypeOf(contact.attributes)).toBe(Object.prototype);
      expect(Object.hasOwn(contact.attributes, "valueOf")).toBe(true);
    });

    it("property: whatever a field's name, making the form is a 400 or a form, and its sign-up never a 500", async () => {
      const companyId = await h.newCompany();
      let run = 0;
      const name = fc.oneof(
        fc.constantFrom(...PROTOTYPE_NAMES),
        fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,12}$/),
        fc.string({ maxLength: 20 }),
      );
      await fc.assert(
        fc.asyncProperty(name, fc.constantFrom("checkbox", "text"), fc.boolean(), async (fieldName, type, send) => {
          let form: PublishedForm;
          try {
            form = await h.forms.create({ companyId, ...draft({ doubleOptIn: false, fields: [...draft().fields, { name: fieldName, label: "X", type, required: false }] }), audit: AUDIT });
          } catch (error) {
            expect(error).toMatchObject({ code: "VALIDATION_ERROR" });
            return;
          }
          expect(PROTOTYPE_NAMES.map((n) => n.toLowerCase())).not.toContain(fieldName.trim().toLowerCase());
          const fields: Record<string, string> = { _token: tokenOf(await open(form)), email: `prop${++run}@example.com`, topic: "News", terms: "yes" };
          if (send) fields[fieldName] = "yes";
          const answer = await post(form, fields);
          expect([200, 400]).toContain(answer.statusCode);
          expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8");
        }),
        { numRuns: 60 },
      );
    });
  });
});
