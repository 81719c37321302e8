import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poolOf } from "../../../src/adapters/postgres/sql.ts";
import type { Contacts } from "../../../src/capabilities/contacts/index.ts";
import type { PublishedForm, SignupFormDraft } from "../../../src/capabilities/forms/index.ts";
import {
  CONFIRMATION_MAX_AGE_MS,
  type DoubleOptIn,
  type HostedSignup,
  RESEND_WINDOW_MS,
  TOKEN_FIELD,
} from "../../../src/capabilities/forms/hosted/index.ts";
import type { StoredMessage } from "../../../src/capabilities/messages/ports.ts";
import { MessageAcceptance } from "../../../src/capabilities/messages/accept/message-acceptance.ts";
import { FixedWindowRateLimiter, type RateLimitWindows } from "../../../src/capabilities/rate-limit/index.ts";
import { loadConfig } from "../../../src/config.ts";
import { createContactsCapability } from "../../../src/wiring/contacts.ts";
import { createCredits } from "../../../src/wiring/credits.ts";
import { createConfirmationMailer, createDoubleOptInCapability, createHostedSignupCapability } from "../../../src/wiring/forms.ts";
import { createSendingSetup } from "../../../src/wiring/sending-setup.ts";
import { createSecretSealer } from "../../../src/capabilities/sending-setup/key-sealing.ts";
import { PostgresMessageStore } from "../../../src/adapters/postgres/messages/message-store.ts";
import { AUDIT, CURSOR_SECRET } from "../contacts/harness.ts";
import { openFormsHarness, type FormsHarness } from "./harness.ts";

/**
 * The double opt-in on PostgreSQL, through the real accept use case (the
 * message rows are what a POST /mail/v1/send writes), with the message
 * workflow's start recorded instead of run: test/api/double-opt-in.test.ts
 * runs the whole path through Temporal and the simulator.
 */

/** A budget that never runs out: these tests are about the double opt-in, not the rate limit. */
class UnlimitedWindows implements RateLimitWindows {
  async add() {
    return { count: 1, resetMs: 60_000 };
  }
  async close() {}
}

function draft(overrides: Partial<SignupFormDraft> = {}): SignupFormDraft {
  return {
    name: "Neuigkeiten",
    fields: [
      { name: "email", label: "E-Mail", type: "email", required: true },
      { name: "firstName", label: "Vorname", type: "text", required: false },
    ],
    consentText: "Ja, schickt mir den Newsletter.",
    doubleOptIn: true,
    language: "de",
    ...overrides,
  };
}

interface MessageRow {
  id: string;
  recipient: string;
  subject: string;
  html: string;
  text_body: string;
  api_key_id: string | null;
  idempotency_key: string;
  tags: Record<string, string>;
  from_email: string;
}

const config = loadConfig({});
const sealer = createSecretSealer(config.dataEncryptionKey, config.dataEncryptionKeys);

describe("double opt-in of the hosted forms (capability, PostgreSQL)", () => {
  let h: FormsHarness;
  let contacts: Contacts;
  let signup: HostedSignup;
  let optIn: DoubleOptIn;
  /** The clock of the forms capability; tests move it. */
  let clock = Math.floor(Date.now() / RESEND_WINDOW_MS) * RESEND_WINDOW_MS + 1000;
  const dispatched: StoredMessage[] = [];
  const warnings: Array<{ details: Record<string, unknown>; message: string }> = [];

  beforeAll(async () => {
    h = await openFormsHarness();
    const now = () => new Date(clock);
    // One clock for every capability: a sign-up's consent time must not look "in the future" to the contacts.
    contacts = createContactsCapability(h.orm, { cursorSecret: CURSOR_SECRET }, { clock: now }).contacts;
    const setup = createSendingSetup(h.orm, config);
    const log = { warn: (details: Record<string, unknown>, message: string) => warnings.push({ details, message }) };
    // The send use case as the messages wiring builds it, with the workflow start recorded instead of made.
    const acceptance = new MessageAcceptance({
      store: new PostgresMessageStore(poolOf(h.orm), { sealer }),
      senders: setup.senders,
      templates: setup.templates,
      wallet: createCredits(h.orm, { config: loadConfig({}) }),
      onAccepted: (message) => dispatched.push(message),
    });
    const mailer = createConfirmationMailer(acceptance);
    optIn = createDoubleOptInCapability({ orm: h.orm, forms: h.forms, contacts, tokenSecret: "test-form-token-secret", mailer, log, clock: now });
    signup = createHostedSignupCapability({
      forms: h.forms,
      contacts,
      rateLimiter: new FixedWindowRateLimiter(new UnlimitedWindows()),
      tokenSecret: "test-form-token-secret",
      confirmations: optIn,
      clock: now,
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** A company with a verified default sender and `credits` credits. */
  async function company(options: { sender?: boolean; credits?: number } = {}): Promise<string> {
    const companyId = await h.newCompany();
    if (options.sender !== false) {
      await h.db.query(
        `with domain as (
           insert into sending_domain (company_id, domain, return_path_domain, dkim_selector, dkim_public_key, dkim_private_key_sealed, verification_overridden)
           values ($1, 'shop.example', 'bounces.shop.example', 'mail', 'unused', 'unused', true) returning id)
         insert into sender (company_id, domain_id, email, name, is_default) select $1, id, 'news@shop.example', 'Shop', true from domain`,
        [companyId],
      );
    }
    if ((options.credits ?? 10) > 0) await createCredits(h.orm, { config: loadConfig({}) }).adjust({ companyId, amount: options.credits ?? 10, note: "test credits" });
    return companyId;
  }

  async function submit(form: PublishedForm, values: Record<string, string>) {
    const opened = await signup.open({ publicId: form.publicId });
    if (!opened) throw new Error("form not open");
    return signup.submit({ publicId: form.publicId, values: { [TOKEN_FIELD]: opened.token, ...values }, clientIp: "203.0.113.9" });
  }

  /** The confirmation emails to `recipient`, their bodies opened as the handoff opens them (at rest they are sealed). */
  async function messagesTo(companyId: string, recipient: string): Promise<MessageRow[]> {
    const { rows } = await h.db.query<MessageRow & { system: boolean }>(
      `select * from message where company_id = $1 and lower(recipient) = lower($2) order by created_at`,
      [companyId, recipient],
    );
    const store = new PostgresMessageStore(poolOf(h.orm), { sealer });
    return Promise.all(
      rows.map(async (row) => {
        expect(row.system).toBe(true);
        expect(`${row.html} ${row.text_body}`).not.toContain("/confirm?token=");
        const opened = await store.load(companyId, row.id);
        return { ...row, html: opened?.html ?? "", text_body: opened?.text ?? "" };
      }),
    );
  }

  function tokenIn(message: MessageRow | undefined): string {
    const token = /\/confirm\?token=([^"&\s]+)/.exec(message?.text_body ?? "")?.[1];
    if (!token) throw new Error("no confirmation link in the message");
    return decodeURIComponent(token);
  }

  async function formEvents(companyId: string) {
    const { rows } = await h.db.query<{ data: Record<string, unknown> }>(
      `select data from webhook_event
        where company_id = $1 and event = 'contact.updated' and data->>'source' = 'form' and data->>'change' = 'consent'
        order by occurred_at`,
      [companyId],
    );
    return rows.map((row) => row.data);
  }

  it("sends one confirmation email per sign-up and window, through the send path, in the form's language", async () => {
    const companyId = await company();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    expect(await submit(form, { email: "Ada@Example.com", firstName: "Ada" })).toMatchObject({ kind: "accepted", confirmationRequired: true });

    const [message, ...more] = await messagesTo(companyId, "Ada@example.com");
    expect(more).toHaveLength(0);
    expect(message).toMatchObject({
      subject: "Bitte bestätigen Sie Ihre Anmeldung: Neuigkeiten",
      from_email: "news@shop.example",
      api_key_id: null,
      tags: { mail_kind: "signup-confirmation", form: form.publicId },
    });
    expect(message?.html).toContain("Anmeldung bestätigen</a>");
    expect(message?.text_body).toContain(`${form.url}/confirm?token=`);
    expect(dispatched.map((m) => m.id)).toContain(message?.id);

    // Resubmitted in the same window, even with other words in it: no second email.
    expect(await submit(form, { email: "ada@example.com", firstName: "Ada L." })).toMatchObject({ kind: "accepted" });
    const contact = await contacts.get({ companyId, idOrEmail: "ada@example.com" });
    // A retried request (twice at once) finds the same message.
    const retried = await Promise.all([1, 2].map(() => optIn.request({ companyId, form, contact })));
    expect(retried).toEqual([{ kind: "already-sent" }, { kind: "already-sent" }]);
    expect(await messagesTo(companyId, "Ada@example.com")).toHaveLength(1);
    expect(dispatched.filter((m) => m.companyId === companyId)).toHaveLength(1);

    // The next window sends a new one (the visitor lost the first), with a link of its own.
    clock += RESEND_WINDOW_MS;
    await submit(form, { email: "ada@example.com" });
    const both = await messagesTo(companyId, "ada@example.com");
    // The contact keeps the address as first written: an anonymous sign-up changes nothing of an existing contact.
    expect(both.map((m) => m.recipient)).toEqual(["Ada@example.com", "Ada@example.com"]);
    expect(tokenIn(both[1])).not.toBe(tokenIn(both[0]));
    // Both links work until they expire.
    expect(await optIn.open({ publicId: form.publicId, token: tokenIn(both[0]) })).toMatchObject({ kind: "ready" });
  });

  it("thanks the visitor and leaves the contact pending when the company has no default sender or no credits, logging no address", async () => {
    for (const [setup, code] of [
      [{ sender: false }, "SENDER_NOT_VERIFIED"],
      [{ credits: 0 }, "INSUFFICIENT_CREDITS"],
    ] as const) {
      const companyId = await company(setup);
      const form = await h.forms.create({ companyId, ...draft({ language: "en" }), audit: AUDIT });
      expect(await submit(form, { email: "bob@example.com" })).toMatchObject({ kind: "accepted", confirmationRequired: true });
      expect((await contacts.get({ companyId, idOrEmail: "bob@example.com" })).status).toBe("pending");
      expect(await messagesTo(companyId, "bob@example.com")).toHaveLength(0);
      const warning = warnings.find((w) => w.details.companyId === companyId);
      expect(warning).toMatchObject({ details: { formPublicId: form.publicId, code } });
      expect(JSON.stringify(warning)).not.toContain("bob@");
    }
  });

  it("confirming subscribes the pending contact with the consent evidence and one contact.updated event (source form)", async () => {
    const companyId = await company();
    const form = await h.forms.create({ companyId, ...draft({ language: "fr" }), audit: AUDIT });
    await submit(form, { email: "carol@example.com" });
    const token = tokenIn((await messagesTo(companyId, "carol@example.com"))[0]);

    expect(await optIn.open({ publicId: form.publicId, token })).toEqual({ kind: "ready", form, token });
    // Opening the link (a mail scanner does) changes nothing.
    expect((await contacts.get({ companyId, idOrEmail: "carol@example.com" })).status).toBe("pending");

    clock += 60_000;
    expect(await optIn.confirm({ publicId: form.publicId, token, clientIp: "198.51.100.4" })).toEqual({ kind: "confirmed", form });
    const contact = await contacts.get({ companyId, idOrEmail: "carol@example.com" });
    expect(contact).toMatchObject({
      status: "subscribed",
      consent: {
        source: `form:${form.publicId}`,
        at: new Date(clock),
        reference: `form ${form.publicId}; consent text v1; ip 198.51.100.4; double opt-in confirmed`,
      },
    });
    expect(await formEvents(companyId)).toEqual([
      { contactId: contact.id, email: "carol@example.com", status: "subscribed", source: "form", change: "consent", occurredAt: new Date(clock).toISOString() },
    ]);

    // Twice is harmless: "already confirmed", nothing written.
    expect(await optIn.confirm({ publicId: form.publicId, token, clientIp: "198.51.100.4" })).toEqual({ kind: "already-confirmed", form });
    expect(await optIn.open({ publicId: form.publicId, token })).toEqual({ kind: "already-confirmed", form });
    expect(await formEvents(companyId)).toHaveLength(1);
    expect((await contacts.get({ companyId, idOrEmail: "carol@example.com" })).updatedAt).toEqual(contact.updatedAt);
  });

  it("never overwrites a contact that unsubscribed, bounced or complained meanwhile", async () => {
    const companyId = await company();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    for (const [email, change] of [
      ["dan@example.com", () => contacts.upsert({ companyId, email: "dan@example.com", status: "unsubscribed" })],
      ["erin@example.com", () => contacts.markFromSuppression({ companyId, email: "erin@example.com", reason: "bounce" })],
      ["fay@example.com", () => contacts.markFromSuppression({ companyId, email: "fay@example.com", reason: "complaint" })],
    ] as const) {
      await submit(form, { email });
      const token = tokenIn((await messagesTo(companyId, email))[0]);
      const before = await change();
      expect(before).toBeTruthy();
      const status = (await contacts.get({ companyId, idOrEmail: email })).status;
      expect(status).not.toBe("pending");
      expect(await optIn.open({ publicId: form.publicId, token })).toEqual({ kind: "not-possible", form });
      expect(await optIn.confirm({ publicId: form.publicId, token, clientIp: "198.51.100.4" })).toEqual({ kind: "not-possible", form });
      expect((await contacts.get({ companyId, idOrEmail: email })).status).toBe(status);
    }
    expect(await formEvents(companyId)).toHaveLength(0);
  });

  it("refuses tampered, foreign and expired links; a deactivated form's sign-ups still confirm", async () => {
    const companyId = await company();
    const form = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    const other = await h.forms.create({ companyId, ...draft(), audit: AUDIT });
    await submit(form, { email: "gus@example.com" });
    const token = tokenIn((await messagesTo(companyId, "gus@example.com"))[0]);
    const [contactId, version, issuedAt, mac] = token.split(".");
    const flipped = Buffer.from(mac ?? "", "base64url");
    flipped[0] = (flipped[0] ?? 0) ^ 1;

    for (const bad of ["", "garbage", `${contactId}.${version}.${issuedAt}.${flipped.toString("base64url")}`, `${contactId}.2.${issuedAt}.${mac}`]) {
      expect(await optIn.confirm({ publicId: form.publicId, token: bad, clientIp: "198.51.100.4" }), bad).toEqual({ kind: "invalid", form });
    }
    // Another form's address, even of the same company and contact.
    expect(await optIn.confirm({ publicId: other.publicId, token, clientIp: "198.51.100.4" })).toEqual({ kind: "invalid", form: other });
    expect(await optIn.confirm({ publicId: "UnknownForm12345", token, clientIp: "198.51.100.4" })).toEqual({ kind: "not-found" });
    // Another company's contact id under this form's key.
    const elsewhere = await company();
    const foreignForm = await h.forms.create({ companyId: elsewhere, ...draft(), audit: AUDIT });
    await submit(foreignForm, { email: "gus@example.com" });
    const foreignToken = tokenIn((await messagesTo(elsewhere, "gus@example.com"))[0]);
    expect(await optIn.confirm({ publicId: form.publicId, token: foreignToken, clientIp: "198.51.100.4" })).toEqual({ kind: "invalid", form });

    const saved = clock;
    clock += CONFIRMATION_MAX_AGE_MS + RESEND_WINDOW_MS;
    expect(await optIn.open({ publicId: form.publicId, token })).toEqual({ kind: "expired", form });
    expect(await optIn.confirm({ publicId: form.publicId, token, clientIp: "198.51.100.4" })).toEqual({ kind: "expired", form });
    clock = saved;
    expect((await contacts.get({ companyId, idOrEmail: "gus@example.com" })).status).toBe("pending");

    await h.forms.deactivate({ companyId, publicId: form.publicId, audit: AUDIT });
    expect(await optIn.confirm({ publicId: form.publicId, token, clientIp: "198.51.100.4" })).toMatchObject({ kind: "confirmed" });
    // An expired link of a confirmed sign-up says so rather than "expired".
    clock += CONFIRMATION_MAX_AGE_MS + RESEND_WINDOW_MS;
    expect(await optIn.open({ publicId: form.publicId, token })).toMatchObject({ kind: "already-confirmed" });
    clock = saved;
  });
});
