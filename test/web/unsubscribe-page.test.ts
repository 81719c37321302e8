import { randomUUID } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable } from "../support/chromium.ts";

/**
 * The hosted unsubscribe page (the footer link of a campaign copy) in
 * headless Chromium at a phone's 390 px: no axe violation, nothing the CSP
 * refuses, nothing wider than the screen; opening it changes nothing, the
 * button unsubscribes. Skipped, saying why, only when no Chromium is
 * installed (`apt-get install -y chromium`; .ci/run installs it).
 */
const chromiumInstalled = await chromiumAvailable("the unsubscribe page browser test");

describe.skipIf(!chromiumInstalled)("the hosted unsubscribe page in a browser", () => {
  let h: ApiHarness;
  let browser: Browser;
  let page: Page;
  let shop: { companyId: string; secret: string };
  const console: string[] = [];

  beforeAll(async () => {
    h = await startApiHarness();
    shop = await h.newCompanyWithKey(["mail.contacts.write", "mail.contacts.read"], "Shop");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    // axe needs a page of a context of its own.
    page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    page.on("console", (message) => console.push(`${message.type()}: ${message.text()}`));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  async function contactStatus(id: string): Promise<string> {
    const response = await h.fetch(`/mail/v1/contacts/${id}`, { headers: { authorization: `Bearer ${shop.secret}` } });
    return ((await response.json()) as { status: string }).status;
  }

  async function footerLink(language: string): Promise<{ url: string; contactId: string }> {
    const email = `reader-${randomUUID()}@customer.test`;
    const created = await h.fetch("/mail/v1/contacts", {
      method: "POST",
      headers: { authorization: `Bearer ${shop.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ email, consent: { source: "test" } }),
    });
    const contactId = ((await created.json()) as { id: string }).id;
    const copy = await h.app.tracking.decorate({
      companyId: shop.companyId,
      campaignId: randomUUID(),
      recipientId: randomUUID(),
      contactId,
      email,
      html: "<p>Hello</p>",
      text: "Hello",
      trackOpens: false,
      trackClicks: false,
      language,
    });
    const path = new URL(/<(http[^>]+)>/.exec(copy.headers["List-Unsubscribe"] ?? "")?.[1] ?? "").pathname;
    return { url: new URL(path, h.app.httpUrl).href, contactId };
  }

  async function checkPage(what: string): Promise<void> {
    const { violations } = await new AxeBuilder({ page }).analyze();
    expect(violations.map((v) => `${v.id}: ${v.help}`), what).toEqual([]);
    expect(await page.evaluate("document.scrollingElement.scrollWidth"), what).toBeLessThanOrEqual(390);
    expect(console.filter((line) => /Content Security Policy|Refused to/i.test(line)), what).toEqual([]);
  }

  it("asks first, in the copy's language; the button unsubscribes", async () => {
    const { url, contactId } = await footerLink("fr");
    const opened = await page.goto(url);
    expect(opened?.status()).toBe(200);
    expect(opened?.headers()["content-security-policy"]).toContain("default-src 'none'");
    expect(await page.locator("html").getAttribute("lang")).toBe("fr");
    await checkPage("the question");
    expect(await contactStatus(contactId)).toBe("subscribed");

    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.getByRole("button", { name: "Me désinscrire" }).click()]);
    expect(answer.status()).toBe(200);
    await page.getByRole("status").waitFor();
    expect(await page.getByRole("status").textContent()).toBe("Vous êtes désinscrit. Vous ne recevrez plus ces e-mails.");
    await checkPage("the answer");
    expect(await contactStatus(contactId)).toBe("unsubscribed");
  });

  it("a broken link says so, accessibly, with a 404", async () => {
    const { url } = await footerLink("en");
    const opened = await page.goto(`${url.slice(0, -3)}AAA`);
    expect(opened?.status()).toBe(404);
    expect(await page.getByRole("alert").textContent()).toBe("This link is not valid. Open the complete link from the email.");
    await checkPage("the broken link");
  });
});
