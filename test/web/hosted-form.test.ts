import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIRMATION_MAX_AGE_MS, createConfirmationTokens } from "../../src/capabilities/forms/hosted/index.ts";
import { bearer } from "../support/api-harness.ts";
import type { ReadySender, SendingHarness } from "../support/sending-harness.ts";
import { contactEvents, contactOverApi, createDoubleOptInForm, formTokenSecretOf, startFormsHarness, waitForConfirmationMail } from "../support/forms.ts";
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable } from "../support/chromium.ts";

/**
 * A visitor signs up on the hosted page in headless Chromium, reads the
 * confirmation email the simulator took, opens its link in the browser and
 * confirms. Skipped, saying why, only when no Chromium is installed
 * (`apt-get install -y chromium`; .ci/run installs it).
 */
const chromiumInstalled = await chromiumAvailable("the hosted form browser test");

describe.skipIf(!chromiumInstalled)("the hosted sign-up form in a browser, with its double opt-in", () => {
  let h: SendingHarness;
  let shop: ReadySender;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    h = await startFormsHarness();
    shop = await h.readySender({ scopes: ["mail.events.read", "mail.contacts.read", "mail.contacts.write"] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** Fills the hosted form in and submits it as a person would: by its labels and its button. */
  async function signUpInBrowser(formUrl: string, email: string, firstName?: string): Promise<void> {
    await page.goto(formUrl);
    await page.getByLabel("Email").fill(email);
    if (firstName) await page.getByLabel("First name").fill(firstName);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("status").waitFor();
    expect(await page.getByRole("status").textContent()).toBe("Thank you! Please check your inbox and confirm your address.");
  }

  it("signs up, confirms from the email's link, and the contact is subscribed", async () => {
    const form = await createDoubleOptInForm(h, shop.companyId);
    await signUpInBrowser(form.url, "ada@example.com", "Ada");
    expect((await contactOverApi(h, shop.secret, "ada@example.com")).status).toBe("pending");

    const mail = await waitForConfirmationMail(h, shop.companyId, "ada@example.com", shop.secret);
    const opened = await page.goto(mail.link);
    expect(opened?.status()).toBe(200);
    expect(await page.getByText("Please confirm your sign-up.").isVisible()).toBe(true);
    // Opening the link alone subscribes nobody.
    expect((await contactOverApi(h, shop.secret, "ada@example.com")).status).toBe("pending");

    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.getByRole("button", { name: "Confirm my sign-up" }).click()]);
    expect(answer.status()).toBe(200);
    await page.getByRole("status").waitFor();
    expect(await page.getByRole("status").textContent()).toBe("Thank you! Your sign-up is confirmed.");

    expect(await contactOverApi(h, shop.secret, "ada@example.com")).toMatchObject({ status: "subscribed", consent: { source: `form:${form.publicId}` } });
    expect((await contactEvents(h, shop.companyId)).filter((e) => e.change === "consent" && e.source === "form")).toHaveLength(1);

    // The link again, later: already confirmed.
    await page.goto(mail.link);
    expect(await page.getByRole("status").textContent()).toBe("Your sign-up is already confirmed.");
  });

  it("shows a clear 400 page for a tampered or expired link, and refuses a contact that unsubscribed meanwhile", async () => {
    const form = await createDoubleOptInForm(h, shop.companyId);
    await signUpInBrowser(form.url, "bob@example.com");
    const mail = await waitForConfirmationMail(h, shop.companyId, "bob@example.com", shop.secret);
    const url = new URL(mail.link);
    const token = url.searchParams.get("token") ?? "";

    const at = token.length - 10;
    url.searchParams.set("token", `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`);
    expect((await page.goto(url.toString()))?.status()).toBe(400);
    expect(await page.getByRole("alert").textContent()).toContain("This confirmation link is not valid.");

    const { rows } = await h.db.query<{ id: string }>(`select id from signup_form where public_id = $1`, [form.publicId]);
    url.searchParams.set(
      "token",
      createConfirmationTokens(formTokenSecretOf(h)).issue(
        { companyId: shop.companyId, formId: rows[0]?.id ?? "", contactId: token.split(".")[0] ?? "", email: "bob@example.com", consentVersion: 1 },
        new Date(Date.now() - CONFIRMATION_MAX_AGE_MS - 3600_000),
      ),
    );
    expect((await page.goto(url.toString()))?.status()).toBe(400);
    expect(await page.getByRole("alert").textContent()).toContain("This confirmation link has expired.");

    // The page with the button is open when the contact unsubscribes elsewhere; the click changes nothing.
    await page.goto(mail.link);
    const unsubscribe = await h.fetch("/mail/v1/contacts", {
      method: "POST",
      headers: { ...bearer(shop.secret).headers, "content-type": "application/json" },
      body: JSON.stringify({ email: "bob@example.com", status: "unsubscribed" }),
    });
    expect(unsubscribe.status).toBe(200);
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.getByRole("button", { name: "Confirm my sign-up" }).click()]);
    expect(answer.status()).toBe(409);
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toBe("This sign-up can no longer be confirmed for this address.");
    expect((await contactOverApi(h, shop.secret, "bob@example.com")).status).toBe("unsubscribed");
  });
});
