import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { bearer } from "../support/api-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import type { ReadySender } from "../support/sending-harness.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The administration screen in headless Chromium against the real service
 * (issue 20, items 1 and 2): sign-in from a one-time link, the role's tabs,
 * the message log with its filters in the URL, a message's page with its
 * live timeline and its content in a sandboxed frame, and tenant
 * isolation through the screen. Every page is checked by axe and by the
 * guard (no CSP violation, no console error, no unannounced failed call),
 * with screenshots in test-output/admin-screen/.
 *
 * Skipped, saying why, only when Chromium is missing outside CI; in CI it fails.
 */
const chromiumInstalled = await chromiumAvailable("the administration screen's browser tests");

// Each step drives a real browser against a real service on a shared 2-core machine: generous limits, no timing assertion.
describe.skipIf(!chromiumInstalled)("the administration screen: sign-in and the message log", { timeout: 180_000 }, () => {
  let screen: AdminScreen;
  let shop: ReadySender;
  let owner: ScreenPage;
  /** A local server standing for a remote image host: counts every request that reaches it. */
  let pixelHost: Server;
  let pixelRequests = 0;

  async function send(to: string, subject: string, extra: Record<string, unknown> = {}): Promise<string> {
    const response = await screen.h.send(shop.secret, { to, subject, html: `<p>${subject}</p>`, text: subject, ...extra });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    pixelHost = createServer((_request, response) => {
      pixelRequests += 1;
      response.writeHead(200, { "content-type": "image/gif" }).end(Buffer.from("R0lGODlhAQABAAAAACw=", "base64"));
    });
    await new Promise<void>((resolve) => pixelHost.listen(0, "127.0.0.1", resolve));
    screen = await startAdminScreen();
    shop = await screen.company();
  });
  afterAll(async () => {
    await screen?.close();
    await new Promise((resolve) => pixelHost?.close(resolve));
  });

  it("tells a visitor without a session to use a sign-in link", async () => {
    const visitor = await screen.openPage();
    visitor.expectFailedCalls({ rpc: "GetSession", status: 401 });
    await visitor.goto("/messages");
    await visitor.page.getByText("You are not signed in. To sign in, open a sign-in link.").waitFor();
    expect(await visitor.page.getByRole("navigation", { name: "Sections" }).count()).toBe(0);
    await screen.checkPage(visitor, "signed-out");

    // The guard bites: an inline <style> (what a run-time CSS-in-JS library would add) is refused by the CSP and reported.
    await visitor.page.evaluate(`document.head.appendChild(Object.assign(document.createElement("style"), { textContent: "body { display: none }" }))`);
    await expect
      .poll(() => visitor.problems())
      .toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^securitypolicyviolation: style-src-elem blocked inline/),
          expect.stringMatching(/^console error: Applying inline style violates the following Content Security Policy directive 'style-src 'self''/),
        ]),
      );
    expect(await visitor.page.getByText("You are not signed in.", { exact: false }).isVisible()).toBe(true);
    expect(() => screen.assertClean(visitor)).toThrow(/securitypolicyviolation/);
    await visitor.close();
  });

  it("signs in from a link: the token leaves the address bar at once, the header shows the member, the company and every tab", async () => {
    const hash = await screen.signInLink(shop.companyId, { email: "olivia@shop.test", displayName: "Olivia Owner", role: MemberRole.OWNER });
    owner = await screen.openPage();
    const { page } = owner;
    // What the address bar showed at each navigation of the main frame.
    const addresses: string[] = [];
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) addresses.push(frame.url());
    });
    await page.goto(`${screen.origin}/admin/sign-in${hash}`);
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();

    expect(page.url()).toBe(`${screen.origin}/admin/overview`);
    expect(await page.evaluate("location.hash")).toBe("");
    // Only the navigation that opened the link showed the token; it was replaced, so Back does not bring it back.
    expect(addresses.filter((a) => a.includes("token="))).toEqual([`${screen.origin}/admin/sign-in${hash}`]);
    await page.goBack();
    expect(page.url()).toBe("about:blank");
    await page.goForward();
    await page.waitForURL(`${screen.origin}/admin/overview`);
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    // The session cookie is HttpOnly: no script of the page can read it.
    expect(await page.evaluate("document.cookie")).toBe("");
    const cookies = await owner.context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([["__Host-mail_session", true, "Strict"]]);

    const header = page.getByRole("banner");
    expect(await header.getByText("Olivia Owner").isVisible()).toBe(true);
    expect(await header.getByText(/^Shop [0-9a-f]{6}$/).isVisible()).toBe(true);
    const tabs = page.getByRole("navigation", { name: "Sections" }).getByRole("link");
    expect(await tabs.allTextContents()).toEqual(["Overview", "Messages", "Contacts", "Lists", "Forms", "Templates", "Campaigns", "Suppressions", "Credits", "Domains", "API keys", "Webhooks", "Deliveries", "Members", "Audit"]);
    expect(await page.getByRole("link", { name: "Overview" }).getAttribute("aria-current")).toBe("page");
    screen.assertClean(owner);
  });

  it("refuses the same link a second time, saying the link cannot be used", async () => {
    const hash = await screen.signInLink(shop.companyId, { email: "twice@shop.test", role: MemberRole.MEMBER });
    const first = await screen.openPage();
    await first.page.goto(`${screen.origin}/admin/sign-in${hash}`);
    await first.page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    expect(first.page.url()).toBe(`${screen.origin}/admin/overview`);
    await first.close();

    const second = await screen.openPage();
    second.expectFailedCalls({ rpc: "ExchangeSignInLink", status: 401 });
    await second.page.goto(`${screen.origin}/admin/sign-in${hash}`);
    await second.page.getByRole("alert").filter({ hasText: "This sign-in link cannot be used" }).waitFor();
    expect(second.page.url()).toBe(`${screen.origin}/admin/sign-in`);
    await screen.checkPage(second, "sign-in-link-used");
    await second.close();
  });

  it("finds a message by its recipient and opens it: every field, the live timeline, the deliveries, the content", async () => {
    await send("someone-else@customer.test", "Not this one");
    // slow@ is delivered about 5 s after the handoff: the page is open before, and refreshes by itself.
    const id = await send("slow+ada@customer.test", "Your receipt", { tags: { order: "A-1001" } });
    const { page } = owner;
    await owner.goto("/messages");
    await page.getByLabel("Recipient or subject").fill("slow+ada");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/\?q=slow%2Bada$/);
    const rows = page.getByRole("region", { name: "Message log" }).getByRole("row");
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByRole("link", { name: "slow+ada@customer.test" }).click();
    await page.waitForURL(`${screen.origin}/admin/messages/${id}`);
    await page.getByRole("heading", { name: "Your receipt", level: 1 }).waitFor();

    const fields = page.locator("dl.fields");
    expect(await fields.getByText(id).isVisible()).toBe(true);
    expect(await fields.getByText("slow+ada@customer.test").isVisible()).toBe(true);
    expect(await fields.getByText("order: A-1001").isVisible()).toBe(true);
    for (const label of ["Id", "Recipient", "Subject", "Status", "Error code", "Template", "Provider message id", "Created", "Sent", "Last event", "Tags"]) {
      expect(await fields.locator("dt", { hasText: new RegExp(`^${label}$`) }).count(), label).toBe(1);
    }
    // Times in the member's locale, UTC on hover.
    const created = fields.locator("time").first();
    expect(await created.getAttribute("title")).toMatch(/ UTC$/);
    expect(await created.getAttribute("dateTime")).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);

    // The timeline reaches `delivery` without a reload.
    const timeline = page.getByRole("list", { name: "Events, oldest first" });
    await timeline.getByText("delivery", { exact: true }).waitFor({ timeout: 30_000 });
    expect(await page.locator("dl.fields dt:text-is('Status') + dd").textContent()).toBe("delivered");
    // Delivered is not the end: a delivered message may still bounce or draw a complaint, so the page keeps following it.
    expect(await page.getByText("This message can still change").isVisible()).toBe(true);

    expect(await page.getByText("This message caused no webhook delivery.").isVisible()).toBe(true);
    const text = page.getByRole("region", { name: "Text version as sent" });
    expect(await text.textContent()).toBe("Your receipt");
    await screen.checkPage(owner, "message");
  });

  it("shows the HTML in a sandboxed frame where scripts do not run and a remote image is not loaded", async () => {
    const remote = `http://127.0.0.1:${(pixelHost.address() as AddressInfo).port}/pixel.gif`;
    const id = await send("pixel@customer.test", "Newsletter", {
      html: `<h1>Hello</h1><p>Read on.</p><img src="${remote}" alt="tracker" width="1" height="1">`,
      text: "Hello. Read on.",
    });
    const { page } = owner;
    owner.expectBlockedImages(remote);
    await owner.goto(`/messages/${id}`);
    const frameElement = page.locator("iframe.content-html");
    await frameElement.waitFor();
    expect(await frameElement.getAttribute("sandbox")).toBe("");
    expect(await frameElement.getAttribute("title")).toBe("HTML version as sent");
    const frame = page.frameLocator("iframe.content-html");
    await frame.getByRole("heading", { name: "Hello" }).waitFor();
    // The frame finished loading (its load event waits for images): the image host saw nothing.
    expect(await frameElement.evaluate((element) => (element as unknown as { contentDocument: unknown }).contentDocument === null)).toBe(true);
    expect(await frame.locator("img").evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(0);
    expect(pixelRequests).toBe(0);
    // An opaque origin: the page cannot reach into the frame, nor the frame into the page.
    expect(await frame.locator("body").evaluate((body) => (body as unknown as { ownerDocument: { defaultView: { origin: string } } }).ownerDocument.defaultView.origin)).toBe("null");
    screen.assertClean(owner);
  });

  it("keeps the filters in the URL: a filtered view is a link, back and forward move between filters", async () => {
    const bounced = await send("bounce+filters@customer.test", "Bounces");
    await send("filters@customer.test", "Delivered", { tags: { campaign: "autumn" } });
    await screen.h.waitForMessage(shop.secret, bounced, (message) => message.status === "bounced");
    const { page } = owner;
    await owner.goto("/messages");

    await page.getByLabel("Status").selectOption("bounced");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/\?status=bounced$/);
    await expect.poll(() => page.getByRole("region", { name: "Message log" }).getByRole("link").allTextContents(), { timeout: 30_000 }).toEqual(["bounce+filters@customer.test"]);

    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Tag").fill("campaign");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/\?tag=campaign$/);
    await expect.poll(() => page.getByRole("region", { name: "Message log" }).getByRole("link").allTextContents()).toEqual(["filters@customer.test"]);

    await page.goBack();
    await page.waitForURL(/\?status=bounced$/);
    expect(await page.getByLabel("Status").inputValue()).toBe("bounced");
    expect(await page.getByLabel("Tag").inputValue()).toBe("");
    await expect.poll(() => page.getByRole("region", { name: "Message log" }).getByRole("link").allTextContents()).toEqual(["bounce+filters@customer.test"]);

    await page.goForward();
    await page.waitForURL(/\?tag=campaign$/);
    expect(await page.getByLabel("Tag").inputValue()).toBe("campaign");

    // The link shared with someone else of the company opens the same view.
    const shared = page.url();
    const colleague = await screen.signIn(shop.companyId, { email: "colleague@shop.test", role: MemberRole.ADMIN });
    await colleague.page.goto(shared);
    // Signed in on the overview, then the shared link: the log loads afresh.
    await colleague.page.getByRole("region", { name: "Message log" }).getByRole("link").first().waitFor();
    expect(await colleague.page.getByLabel("Tag").inputValue()).toBe("campaign");
    await expect.poll(() => colleague.page.getByRole("region", { name: "Message log" }).getByRole("link").allTextContents()).toEqual(["filters@customer.test"]);
    screen.assertClean(colleague);
    await colleague.close();
    screen.assertClean(owner);
  });

  it("works from the keyboard: skip link, filters, a message", async () => {
    const { page } = owner;
    await owner.goto("/messages");
    await page.getByRole("heading", { name: "Messages", level: 1 }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.labels[0].textContent")).toBe("Recipient or subject");
    await page.keyboard.type("filters@customer.test");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\?q=filters%40customer\.test$/);
    const link = page.getByRole("region", { name: "Message log" }).getByRole("link", { name: "filters@customer.test", exact: true });
    await link.waitFor();
    await link.focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Delivered", level: 1 }).waitFor();
    // The browser's Back (its own shortcut is outside the page): the filtered log comes back with its filter.
    await page.goBack();
    await page.waitForURL(/\?q=filters%40customer\.test$/);
    expect(await page.getByLabel("Recipient or subject").inputValue()).toBe("filters@customer.test");
    screen.assertClean(owner);
  });

  it("pages through the log newest first, loading more as the end comes into view", async () => {
    const paging = await screen.company();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const response = await screen.h.send(paging.secret, { to: `reader${i}@customer.test`, subject: `Issue ${i}`, html: `<p>${i}</p>` });
      ids.push(((await response.json()) as { id: string }).id);
    }
    const reader = await screen.signIn(paging.companyId, { email: "reader@paging.test", role: MemberRole.MEMBER });
    const { page } = reader;
    await reader.goto("/messages");
    const links = page.getByRole("region", { name: "Message log" }).getByRole("link");
    await links.first().waitFor();
    await expect.poll(() => links.count()).toBe(25);
    expect((await links.allTextContents())[0]).toBe("reader29@customer.test");
    await page.getByRole("button", { name: "Load more messages" }).scrollIntoViewIfNeeded();
    await expect.poll(() => links.count()).toBe(30);
    expect(await links.allTextContents()).toEqual(ids.map((_, i) => `reader${29 - i}@customer.test`));
    await page.getByText("No more messages.").waitFor();
    await screen.checkPage(reader, "messages");
    await reader.close();
  });

  it("answers another company's message as not found through the screen", async () => {
    const other = await screen.company();
    const response = await screen.h.send(other.secret, { to: "secret@other.test", subject: "Other company's secret", html: "<p>confidential</p>" });
    const { id } = (await response.json()) as { id: string };
    expect((await screen.h.fetch(`/mail/v1/messages/${id}`, bearer(other.secret))).status).toBe(200);

    owner.expectFailedCalls({ rpc: "GetMessage", status: 404 });
    const before = owner.calls().length;
    await owner.goto(`/messages/${id}`);
    await owner.page.getByRole("heading", { name: "Message not found" }).waitFor();
    expect(await owner.page.getByText("Other company's secret").count()).toBe(0);
    expect(await owner.page.getByText("secret@other.test").count()).toBe(0);
    // Besides the header's balance and sending banner (the member's own company), only the session and the refused message.
    const header = ["CreditsService/GetCredits", "SendingStatusService/GetSendingStatus"];
    expect(owner.calls().slice(before).filter((call) => !header.some((rpc) => call.startsWith(rpc)))).toEqual(["SessionService/GetSession 200", "MailService/GetMessage 404"]);
    await screen.checkPage(owner, "message-not-found");
  });

  it("shows a member the tabs of Mail access only (Overview, Messages, Contacts, Forms, Templates, Campaigns, Suppressions, Credits, Domains); the administrators' pages say they are not theirs", async () => {
    await send("member-view@customer.test", "For the member");
    const member = await screen.signIn(shop.companyId, { email: "mia@shop.test", displayName: "Mia Member", role: MemberRole.MEMBER });
    const { page } = member;
    const tabs = page.getByRole("navigation", { name: "Sections" }).getByRole("link");
    expect(await tabs.allTextContents()).toEqual(["Overview", "Messages", "Contacts", "Forms", "Templates", "Campaigns", "Suppressions", "Credits", "Domains"]);
    expect(await page.getByRole("banner").getByText("Mia Member").isVisible()).toBe(true);

    await member.goto("/messages");
    await page.getByRole("link", { name: "member-view@customer.test" }).click();
    await page.getByRole("heading", { name: "For the member", level: 1 }).waitFor();
    // No webhook deliveries section for a member: WebhooksService is for Mail administrators.
    expect(await page.getByRole("heading", { name: "Webhook deliveries" }).count()).toBe(0);
    expect(member.calls().filter((call) => call.startsWith("WebhooksService/"))).toEqual([]);

    for (const path of ["/lists", "/keys", "/webhooks", "/deliveries", "/members", "/audit"]) {
      await member.goto(path);
      await page.getByRole("heading", { name: "Not available" }).waitFor();
    }
    await screen.checkPage(member, "member-not-available");
    await member.goto("/messages");
    await screen.checkPage(member, "member-messages");
    await member.close();
  });

  it("signs out: the session ends and the screen asks for a sign-in link again", async () => {
    const leaving = await screen.signIn(shop.companyId, { email: "leaving@shop.test", role: MemberRole.ADMIN });
    const { page } = leaving;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    leaving.expectFailedCalls({ rpc: "GetSession", status: 401 });
    await page.reload();
    await page.getByText("You are not signed in. To sign in, open a sign-in link.").waitFor();
    screen.assertClean(leaving);
    await leaving.close();
  });
});
