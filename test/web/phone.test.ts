import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { chromiumAvailable } from "../support/chromium.ts";
import type { ReadySender } from "../support/sending-harness.ts";
import { type AdminScreen, PHONE_WIDTH, SCREENSHOTS_DIR, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The screen on a phone (390 px wide), light and dark, in headless
 * Chromium against the real service: every page fits without a sideways
 * scroll, each list shows its key columns and actions as cards inside the
 * screen, every section is reachable from the menu (by keyboard too), a
 * long recipient wraps at "@" and dots only, and a page whose code fails
 * to load offers "Try again" instead of a blank screen.
 */
const chromiumInstalled = await chromiumAvailable("the administration screen's phone test");

const RECIPIENT = "alexandra.konstantinopoulou+receipts@accounts.northwind-traders.example";

// Each page is checked by axe and photographed at two widths and two schemes: generous limits on a shared machine.
describe.skipIf(!chromiumInstalled)("the administration screen on a phone", { timeout: 180_000 }, () => {
  let ui: AdminScreen;
  let shop: ReadySender;
  let owner: ScreenPage;
  let messageId = "";

  beforeAll(async () => {
    ui = await startAdminScreen();
    shop = await ui.company();
    const response = await ui.h.send(shop.secret, {
      to: RECIPIENT,
      subject: "Your order of three hand-thrown stoneware mugs has shipped and is on its way to you",
      html: "<p>Shipped.</p>",
      text: "Shipped.",
      tags: { order: "A-2001", campaign: "autumn" },
    });
    expect(response.status).toBe(202);
    messageId = ((await response.json()) as { id: string }).id;
    owner = await ui.signIn(shop.companyId, { email: "olive@phone.example", displayName: "Olive Owner", role: MemberRole.OWNER });
    // A second member: the members list has a row with every action.
    await ui.signInLink(shop.companyId, { email: "mia@phone.example", displayName: "Mia Member", role: MemberRole.MEMBER });
  });
  afterAll(async () => {
    try {
      if (owner) ui.assertClean(owner);
    } finally {
      await ui?.close();
    }
  });

  /** Opens a page of the screen and waits for its heading and for `ready` (a text of its first row, or its empty state). */
  async function open(path: string, ready: string | RegExp): Promise<void> {
    await owner.goto(path);
    await owner.page.locator("main h1").first().waitFor();
    await owner.page.getByText(ready).first().waitFor();
  }

  it("shows the message log's recipient, status and subject inside the screen, and the message with its fields", async () => {
    await open("/messages", "alexandra");
    await ui.checkPhone(owner, "messages", [{ region: "Message log", columns: ["Recipient", "Status", "Subject"] }]);
    await open(`/messages/${messageId}`, "Content as sent");
    await ui.checkPhone(owner, "message");
  });

  it("shows each key's name, status, last use and revoke action inside the screen", async () => {
    await open("/keys", "Revoke");
    await ui.checkPhone(owner, "keys", [{ region: "Table of API keys", columns: ["Name", "Status", "Last used"], actions: [/^Revoke/] }]);
  });

  it("shows each member's email, role and actions inside the screen", async () => {
    await open("/members", "mia@phone");
    await ui.checkPhone(owner, "members", [{ region: "Table of members", columns: ["Email", "Role"], actions: [/^Change role/] }]);
  });

  it("shows each audit event's action, actor and time inside the screen", async () => {
    await open("/audit", /^(api_key|member)\.\w+$/);
    await ui.checkPhone(owner, "audit", [{ region: "Table of audit events", columns: ["Action", "Actor", "When"] }]);
  });

  it("fits the webhooks and deliveries pages on a phone", async () => {
    await open("/webhooks", "No endpoint yet");
    await ui.checkPhone(owner, "webhooks");
    await open("/deliveries", "No delivery matches");
    await ui.checkPhone(owner, "deliveries");
  });

  it("reaches every section from the menu, with the keyboard alone", async () => {
    const { page } = owner;
    await page.setViewportSize({ width: PHONE_WIDTH, height: 900 });
    try {
      await open("/messages", "alexandra");
      const nav = page.getByRole("navigation", { name: "Sections" });
      const menu = nav.getByRole("button", { name: "Menu: Messages" });
      // Closed, the sections take no room; the button says where the member is.
      expect(await nav.getByRole("link", { name: "Audit" }).isVisible()).toBe(false);
      await menu.focus();
      await page.keyboard.press("Enter");
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      for (const section of ["Messages", "Contacts", "Lists", "Forms", "API keys", "Webhooks", "Deliveries", "Members", "Audit"]) {
        expect(await nav.getByRole("link", { name: section, exact: true }).isVisible(), section).toBe(true);
      }
      await page.screenshot({ path: join(SCREENSHOTS_DIR, "menu-phone-light.png") });
      // Escape closes it and gives the focus back to the button.
      await page.keyboard.press("Escape");
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      expect(await page.evaluate("document.activeElement.getAttribute('aria-controls') !== null")).toBe(true);

      // Tab into the open menu and choose a section: it opens, and the menu closes.
      await page.keyboard.press("Enter");
      const sections = await nav.getByRole("link").count();
      for (let i = 0; i < sections; i++) {
        await page.keyboard.press("Tab");
        if ((await page.evaluate("document.activeElement.textContent")) === "Members") break;
      }
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
      await nav.getByRole("button", { name: "Menu: Members" }).waitFor();
      expect(await nav.getByRole("button", { name: "Menu: Members" }).getAttribute("aria-expanded")).toBe("false");
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("wraps a long recipient on the message page at @ and dots, never inside a word", async () => {
    const { page } = owner;
    await page.setViewportSize({ width: PHONE_WIDTH, height: 900 });
    try {
      await open(`/messages/${messageId}`, "Content as sent");
      const recipient = page.locator("dl.fields dt:text-is('Recipient') + dd");
      expect(await recipient.textContent()).toBe(RECIPIENT);
      // The text of each line the browser laid out (browser code, as text: this project's TypeScript has no DOM types).
      const lines = (await page.evaluate(`(() => {
        const dt = [...document.querySelectorAll("dl.fields dt")].find((label) => label.textContent === "Recipient");
        const byTop = new Map();
        const walker = document.createTreeWalker(dt.nextElementSibling, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < node.textContent.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const top = Math.round(range.getBoundingClientRect().top);
            byTop.set(top, (byTop.get(top) ?? "") + node.textContent[i]);
          }
        }
        return [...byTop.entries()].sort(([a], [b]) => a - b).map(([, text]) => text);
      })()`)) as string[];
      expect(lines.length).toBeGreaterThan(1);
      expect(lines.join("")).toBe(RECIPIENT);
      for (let i = 1; i < lines.length; i++) {
        const breaksWell = (lines[i - 1] ?? "").endsWith("@") || (lines[i] ?? "").startsWith(".");
        expect(breaksWell, `a line breaks inside a word: ${JSON.stringify(lines)}`).toBe(true);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("offers Try again when a page's code fails to load, and loads it on the retry", async () => {
    const member = await ui.signIn(shop.companyId, { email: "ada@phone.example", role: MemberRole.ADMIN });
    const { page } = member;
    // The API keys page's own chunk, refused once by the network.
    const chunk = /\/admin\/assets\/keys-[\w-]+\.js$/;
    await page.route(chunk, (route) => route.abort("internetdisconnected"));
    member.expectConsoleErrors(/Failed to load resource: net::ERR_INTERNET_DISCONNECTED/, /Failed to fetch dynamically imported module/);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { level: 1, name: "This page could not be shown" }).waitFor();
    // The frame stays: the member can still go elsewhere.
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Messages" }).isVisible()).toBe(true);
    await ui.checkPage(member, "route-failed");

    await page.unroute(chunk);
    await page.getByRole("button", { name: "Try again" }).click();
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    ui.assertClean(member);
    await member.close();
  });
});
