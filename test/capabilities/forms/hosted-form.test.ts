import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublishedForm, SignupFormDraft } from "../../../src/capabilities/forms/index.ts";
import { FixedWindowRateLimiter, type RateLimitWindows } from "../../../src/capabilities/rate-limit/index.ts";
import { registerHostedForms } from "../../../src/transport/connect/forms/hosted/index.ts";
import { createContactsCapability } from "../../../src/wiring/contacts.ts";
import { createHostedSignupCapability } from "../../../src/wiring/forms.ts";
import { CURSOR_SECRET } from "../contacts/harness.ts";
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
  const [issuedAt, signature] = token.split(".");
  const bytes = Buffer.from(signature ?? "", "base64url");
  bytes[0] = (bytes[0] ?? 0) ^ 1;
  return `${issuedAt}.${bytes.toString("base64url")}`;
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
    const form = await h.forms.createForm(await h.newCompany(), draft());
    const page = await app.inject({ method: "GET", url: `/mail/v1/forms/${form.publicId}` });
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain('<html lang="de">');
    expect(page.body).toContain('<label for="f0">E-Mail</label><input type="email" id="f0" name="email"');
    expect(page.body).toContain('<option value="Angebote">Angebote</option>');
    expect(page.body).toContain("Ja, schickt mir den Newsletter.");
    expect(page.body).toContain(">Anmelden</button>");
    expect(page.body).toMatch(/<div class="hp" aria-hidden="true">.*name="_website" value="" tabindex="-1"/);
    expect(tokenOf(page.body)).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
  });

  it("creates a pending contact with the consent evidence (double opt-in)", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.createForm(companyId, draft());
    const answer = await post(form, { _token: tokenOf(await open(form)), _website: "", email: "Ada@Example.com", firstName: "Ada", topic: "News", terms: "yes" });
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain("bestätigen Sie Ihre Adresse");
    const contact = await contactsOf().getContact(companyId, "ada@example.com");
    expect(contact).toMatchObject({
      status: "pending",
      firstName: "Ada",
      attributes: { topic: "News", terms: true },
      consent: { source: `form:${form.publicId}`, reference: "consent text v1; ip 203.0.113.7" },
    });
  });

  it("subscribes at once on a single opt-in form, and never overwrites an unsubscribed contact", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.createForm(companyId, draft({ doubleOptIn: false, language: "en" }));
    const fields = { email: "bob@example.com", topic: "News", terms: "yes" };
    const answer = await post(form, { _token: tokenOf(await open(form)), ...fields });
    expect(answer.body).toContain("Thank you for signing up!");
    expect((await contactsOf().getContact(companyId, "bob@example.com")).status).toBe("subscribed");

    await contactsOf().upsertContact(companyId, { email: "carol@example.com", status: "unsubscribed" });
    expect((await post(form, { _token: tokenOf(await open(form)), ...fields, email: "carol@example.com" })).statusCode).toBe(200);
    expect((await contactsOf().getContact(companyId, "carol@example.com")).status).toBe("unsubscribed");
  });

  it("refuses a missing, forged or other form's token and serves the page again with a fresh one", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.createForm(companyId, draft());
    const other = await h.forms.createForm(companyId, draft());
    const fields = { email: "dan@example.com", topic: "News", terms: "yes" };
    const valid = tokenOf(await open(form));
    for (const token of ["", forged(valid), tokenOf(await open(other)), `${Date.now() - 3 * 3600_000}.${valid.split(".")[1]}`]) {
      const answer = await post(form, { _token: token, ...fields });
      expect(answer.statusCode, token).toBe(403);
      expect(answer.body).toContain('role="alert"');
      expect(tokenOf(answer.body)).not.toBe(token);
    }
    await expect(contactsOf().getContact(companyId, "dan@example.com")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("thanks a bot that filled the honeypot but writes nothing", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.createForm(companyId, draft());
    const answer = await post(form, { _token: tokenOf(await open(form)), _website: "http://spam.example", email: "bot@example.com", topic: "News", terms: "yes" });
    expect(answer.statusCode).toBe(200);
    await expect(contactsOf().getContact(companyId, "bot@example.com")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("names the refused fields, keeping what the visitor typed", async () => {
    const companyId = await h.newCompany();
    const form = await h.forms.createForm(companyId, draft());
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
    const form = await h.forms.createForm(companyId, draft());
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
    const form = await h.forms.createForm(companyId, draft());
    const token = tokenOf(await open(form));
    await h.forms.deactivateForm(companyId, form.publicId);
    expect((await app.inject({ method: "GET", url: `/mail/v1/forms/${form.publicId}` })).statusCode).toBe(404);
    expect((await post(form, { _token: token, email: "hal@example.com", topic: "News", terms: "yes" })).statusCode).toBe(404);
    expect((await app.inject({ method: "GET", url: "/mail/v1/forms/nope" })).statusCode).toBe(404);
  });
});
