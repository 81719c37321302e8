import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIRMATION_MAX_AGE_MS, createConfirmationTokens } from "../../src/capabilities/forms/hosted/index.ts";
import { bearer } from "../support/api-harness.ts";
import type { ReadySender, SendingHarness } from "../support/sending-harness.ts";
import {
  awayFromWindowEdge,
  contactEvents,
  contactOverApi,
  createDoubleOptInForm,
  formTokenSecretOf,
  signUp,
  startFormsHarness,
  waitForConfirmationMail,
} from "../support/forms.ts";

/**
 * Double opt-in end to end, over real HTTP: the hosted page, the
 * confirmation email through the accept use case, the message's Temporal
 * workflow and the simulator, the link, and the contact API. Real
 * PostgreSQL, a real Temporal dev server.
 */
describe("double opt-in of a hosted sign-up form, end to end", () => {
  let h: SendingHarness;
  let shop: ReadySender;

  beforeAll(async () => {
    h = await startFormsHarness();
    shop = await h.readySender({ scopes: ["mail.events.read", "mail.contacts.read", "mail.contacts.write"] });
  });
  afterAll(async () => {
    await h?.close();
  });

  const postToken = (link: string, token: string) =>
    fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }).toString() });

  it("sends the confirmation email, and its link subscribes the contact with a contact.updated (consent, form) event", async () => {
    const form = await createDoubleOptInForm(h, shop.companyId);
    const thanks = await signUp(h, form, { email: "Ada@Example.com", firstName: "Ada" });
    expect(thanks.status).toBe(200);
    expect(await thanks.text()).toContain("Please check your inbox and confirm your address.");
    expect((await contactOverApi(h, shop.secret, "ada@example.com")).status).toBe("pending");

    const mail = await waitForConfirmationMail(h, shop.companyId, "ada@example.com", shop.secret);
    expect(mail.subject).toBe("Please confirm your sign-up: Weekly news");
    // What the visitor typed (firstName) stays out of the email sent from the company's domain.
    expect(mail.text.startsWith("Hello,\n")).toBe(true);
    expect(mail.html).not.toContain("Ada");
    expect(mail.link.startsWith(`${form.url}/confirm?token=`)).toBe(true);

    // Following the link shows a button and changes nothing (a link scanner stops here).
    const page = await fetch(mail.link);
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).toContain('<form method="post" action="confirm">');
    expect(html).toContain(">Confirm my sign-up</button>");
    expect((await contactOverApi(h, shop.secret, "ada@example.com")).status).toBe("pending");

    const token = new URL(mail.link).searchParams.get("token") ?? "";
    const confirmed = await postToken(mail.link.split("?")[0] ?? "", token);
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("Thank you! Your sign-up is confirmed.");

    const contact = await contactOverApi(h, shop.secret, "ada@example.com");
    expect(contact).toMatchObject({ status: "subscribed", consent: { source: `form:${form.publicId}` } });
    expect(contact.consent?.reference).toMatch(new RegExp(`^form ${form.publicId}; consent text v1; ip 127\\.0\\.0\\.1; double opt-in confirmed$`));
    const events = await contactEvents(h, shop.companyId);
    expect(events.filter((e) => e.change === "consent" && e.source === "form")).toEqual([
      expect.objectContaining({ email: "Ada@example.com", status: "subscribed", change: "consent", source: "form" }),
    ]);

    // Twice: "already confirmed", nothing new.
    const again = await postToken(mail.link, token);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain("Your sign-up is already confirmed.");
    expect((await fetch(mail.link)).status).toBe(200);
    expect(await contactEvents(h, shop.companyId)).toHaveLength(events.length);
  });

  it("never changes an existing contact from the anonymous page, answers known and new addresses alike, and lets the owner confirm", async () => {
    const form = await createDoubleOptInForm(h, shop.companyId);
    const write = (body: Record<string, unknown>) =>
      h.fetch("/mail/v1/contacts", { method: "POST", headers: { ...bearer(shop.secret).headers, "content-type": "application/json" }, body: JSON.stringify(body) });
    const known = { email: "gil@example.com", firstName: "Gil", lastName: "Grant", phone: "+41441234567", attributes: { plan: "gold", vip: true } };
    expect((await write({ ...known, status: "subscribed", consent: { source: "checkout", reference: "order 42" } })).status).toBe(200);
    expect((await write({ email: "hana@example.com", firstName: "Hana", attributes: { plan: "free" } })).status).toBe(200);
    const read = async (email: string) => (await (await h.fetch(`/mail/v1/contacts/${email}`, bearer(shop.secret))).json()) as Record<string, unknown>;
    const gilBefore = await read("gil@example.com");
    const hanaBefore = await read("hana@example.com");
    const eventsBefore = (await contactEvents(h, shop.companyId)).length;

    // The attacker signs up known addresses with their own words; a new address for comparison.
    const onKnown = await signUp(h, form, { email: "gil@example.com", firstName: "Mallory" });
    const onPending = await signUp(h, form, { email: "hana@example.com", firstName: "Mallory" });
    const onNew = await signUp(h, form, { email: "ivo@example.com", firstName: "Ivo" });
    const pages = await Promise.all([onKnown, onPending, onNew].map(async (r) => [r.status, await r.text()] as const));
    expect(pages[0]).toEqual(pages[2]);
    expect(pages[1]).toEqual(pages[2]);
    expect(await read("gil@example.com")).toEqual(gilBefore);
    expect(await read("hana@example.com")).toEqual(hanaBefore);
    // Only the new address made an event.
    expect((await contactEvents(h, shop.companyId)).slice(eventsBefore)).toEqual([expect.objectContaining({ email: "ivo@example.com", change: "created" })]);

    // The pending contact's owner gets the confirmation email; confirming subscribes it and keeps its data.
    const mail = await waitForConfirmationMail(h, shop.companyId, "hana@example.com", shop.secret);
    expect(mail.html).not.toContain("Mallory");
    const confirmed = await postToken(mail.link.split("?")[0] ?? "", new URL(mail.link).searchParams.get("token") ?? "");
    expect(confirmed.status).toBe(200);
    expect(await read("hana@example.com")).toMatchObject({ status: "subscribed", firstName: "Hana", attributes: { plan: "free" } });
  });

  it("sends one email for a sign-up resubmitted at once", async () => {
    const form = await createDoubleOptInForm(h, shop.companyId, "de");
    await awayFromWindowEdge();
    for (const firstName of ["Bo", "Bob"]) expect((await signUp(h, form, { email: "bob@example.com", firstName })).status).toBe(200);
    const mail = await waitForConfirmationMail(h, shop.companyId, "bob@example.com", shop.secret);
    expect(mail.subject).toBe("Bitte bestätigen Sie Ihre Anmeldung: Weekly news");
    const { rows } = await h.db.query(`select id from message where company_id = $1 and recipient = 'bob@example.com'`, [shop.companyId]);
    expect(rows).toHaveLength(1);
  });

  it("answers 400 to a tampered, truncated or expired link, and 409 when the contact unsubscribed meanwhile", async () => {
    const form = await createDoubleOptInForm(h, shop.companyId);
    await signUp(h, form, { email: "carol@example.com" });
    const mail = await waitForConfirmationMail(h, shop.companyId, "carol@example.com", shop.secret);
    const token = new URL(mail.link).searchParams.get("token") ?? "";
    const base = mail.link.split("?")[0] ?? "";
    // One character of the MAC changed.
    const at = token.length - 10;
    const flipped = `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`;

    for (const bad of [flipped, token.slice(0, -1), ""]) {
      const get = await fetch(`${base}?token=${encodeURIComponent(bad)}`);
      expect(get.status, bad).toBe(400);
      expect(await get.text()).toContain("This confirmation link is not valid.");
      expect((await postToken(base, bad)).status).toBe(400);
    }

    // The same sign-up's link, issued eight days ago with the service's key.
    const contactId = token.split(".")[0] ?? "";
    const expired = createConfirmationTokens(formTokenSecretOf(h)).issue(
      { companyId: shop.companyId, formId: await formIdOf(form.publicId), contactId, email: "carol@example.com", consentVersion: 1 },
      new Date(Date.now() - CONFIRMATION_MAX_AGE_MS - 24 * 3600_000),
    );
    const old = await postToken(base, expired);
    expect(old.status).toBe(400);
    expect(await old.text()).toContain("This confirmation link has expired.");
    expect((await contactOverApi(h, shop.secret, "carol@example.com")).status).toBe("pending");

    const unsubscribe = await h.fetch("/mail/v1/contacts", {
      method: "POST",
      headers: { ...bearer(shop.secret).headers, "content-type": "application/json" },
      body: JSON.stringify({ email: "carol@example.com", status: "unsubscribed" }),
    });
    expect(unsubscribe.status).toBe(200);
    const refused = await postToken(base, token);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("This sign-up can no longer be confirmed for this address.");
    expect((await contactOverApi(h, shop.secret, "carol@example.com")).status).toBe("unsubscribed");
  });

  it("thanks the visitor of a company without a default sender and leaves the contact pending", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.contacts.read"], "No Sender Ltd");
    const form = await createDoubleOptInForm(h, companyId);
    const thanks = await signUp(h, form, { email: "dan@example.com" });
    expect(thanks.status).toBe(200);
    expect(await thanks.text()).toContain("Please check your inbox and confirm your address.");
    expect((await contactOverApi(h, secret, "dan@example.com")).status).toBe("pending");
    const { rows } = await h.db.query(`select id from message where company_id = $1`, [companyId]);
    expect(rows).toHaveLength(0);
  });

  async function formIdOf(publicId: string): Promise<string> {
    const { rows } = await h.db.query<{ id: string }>(`select id from signup_form where public_id = $1`, [publicId]);
    return rows[0]?.id ?? "";
  }
});
