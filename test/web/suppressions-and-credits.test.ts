import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import type { ReadySender } from "../support/sending-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The Suppressions and Credits pages, walked in headless Chromium against
 * the real service (simulator, Temporal): an owner searches and filters the
 * list, opens the message behind an entry, adds an address and removes one
 * with a reason; an admin is told a complaint needs the owner role; a
 * member reads without buttons. The Credits page shows the balance and the
 * ledger with the message or note behind each entry; the header shows the
 * balance, and a banner shows on every page while the balance is low. Each
 * page passes axe, light and dark, and fits a 390 px phone.
 */
const chromiumInstalled = await chromiumAvailable("the suppressions and credits screen test");

describe.skipIf(!chromiumInstalled)("the Suppressions and Credits pages", { timeout: 240_000 }, () => {
  let ui: AdminScreen;
  let company: ReadySender;
  let owner: ScreenPage;
  const opened: ScreenPage[] = [];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // Low below 50: the company starts with 60 credits and uses 3.
    ui = await startAdminScreen({ lowCreditsThreshold: 50 });
    company = await ui.company({ credits: 60 });
    for (const [name, to] of [
      ["bounce", "bounce+screen@customer.example"],
      ["complaint", "complaint+screen@customer.example"],
      ["delivered", "delivered@customer.example"],
    ] as const) {
      const response = await ui.h.send(company.secret, { to, subject: `Order ${name}`, html: "<p>Thanks</p>" });
      ids[name] = ((await response.json()) as { id: string }).id;
    }
    await ui.h.waitForMessage(company.secret, ids.bounce ?? "", (m) => m.status === "bounced");
    await ui.h.waitForMessage(company.secret, ids.complaint ?? "", (m) => m.status === "complained");
    await ui.h.waitForMessage(company.secret, ids.delivered ?? "", (m) => m.status === "delivered");
    owner = await ui.signIn(company.companyId, { email: "olive@screen.example", displayName: "Olive Owner", role: MemberRole.OWNER });
    opened.push(owner);
  });
  afterAll(async () => {
    try {
      for (const screen of opened) ui.assertClean(screen);
    } finally {
      await ui?.close();
    }
  });

  async function open(screen: ScreenPage, path: string, heading: string): Promise<void> {
    await screen.goto(path);
    await screen.page.getByRole("heading", { level: 1, name: heading }).waitFor();
  }

  const rowsOf = (screen: ScreenPage) => screen.page.getByRole("region", { name: "Suppression list" }).locator("tbody tr");

  it("lists the bounce and the complaint with the message behind each; search, reason and time filters live in the URL", async () => {
    const page = owner.page;
    await open(owner, "/suppressions", "Suppressions");
    const rows = rowsOf(owner);
    await expect.poll(() => rows.count()).toBe(2);
    const text = (await rows.allTextContents()).join("\n");
    expect(text).toContain("complaint+screen@customer.example");
    expect(text).toContain("bounce+screen@customer.example");
    await ui.checkPage(owner, "suppressions");
    await ui.checkPhone(owner, "suppressions", [{ region: "Suppression list", columns: ["Reason", "Message", "Suppressed"], actions: [/^Remove/] }]);

    await page.getByRole("combobox", { name: "Reason" }).selectOption("complaint");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("reason") === "complaint");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("complaint+screen@customer.example");

    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.getByRole("searchbox", { name: "Address contains" }).fill("BOUNCE+");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("q") === "BOUNCE+");
    await expect.poll(() => rows.count()).toBe(1);

    // A window in the future holds nothing.
    await open(owner, `/suppressions?since=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`, "Suppressions");
    await page.getByText("No suppressed address matches these filters.").waitFor();

    // The message behind an entry opens on its own page.
    await open(owner, "/suppressions?reason=bounce", "Suppressions");
    await page.getByRole("link", { name: ids.bounce }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/messages/${ids.bounce}`));
    await page.getByRole("heading", { level: 1 }).filter({ hasText: "Order bounce" }).waitFor();
  });

  it("an owner adds an address, then removes the bounce with a reason; the complaint dialog tells an owner they may", async () => {
    const page = owner.page;
    await open(owner, "/suppressions", "Suppressions");
    await page.getByRole("button", { name: "Add suppression" }).click();
    const add = page.getByRole("dialog", { name: "Suppress an address" });
    await add.getByRole("textbox", { name: "Email address" }).fill("Hand@Customer.example");
    await ui.checkPage(owner, "suppressions-add");
    await add.getByRole("button", { name: "Suppress address" }).click();
    const added = page.getByRole("dialog", { name: "Address suppressed" });
    expect(await added.getByRole("status").textContent()).toBe("hand@customer.example is suppressed.");
    await added.getByRole("button", { name: "Done" }).click();
    await page.getByRole("row", { name: /hand@customer\.example/ }).waitFor();

    await page.getByRole("button", { name: "Remove bounce+screen@customer.example from the suppression list" }).click();
    const remove = page.getByRole("dialog", { name: "Remove bounce+screen@customer.example?" });
    // A reason is required before anything is sent.
    await remove.getByRole("button", { name: "Remove from the list" }).click();
    await remove.getByText("Fill this in.").waitFor();
    await remove.getByRole("textbox", { name: "Why may it be mailed again?" }).fill("the customer fixed their mailbox");
    await ui.checkPage(owner, "suppressions-remove");
    await remove.getByRole("button", { name: "Remove from the list" }).click();
    await remove.waitFor({ state: "hidden" });
    await page.getByRole("row", { name: /bounce\+screen@customer\.example/ }).waitFor({ state: "detached" });

    await page.getByRole("button", { name: "Remove complaint+screen@customer.example from the suppression list" }).click();
    const complaint = page.getByRole("dialog", { name: "Remove complaint+screen@customer.example?" });
    expect(await complaint.textContent()).toContain("Only an owner of your company may remove a complaint; you are one.");
    await complaint.getByRole("textbox", { name: "Why may it be mailed again?" }).waitFor();
    await page.keyboard.press("Escape");
    await complaint.waitFor({ state: "hidden" });
  });

  it("an admin is told that a complaint needs the owner role, and gets nothing to submit; a member reads without buttons", async () => {
    const admin = await ui.signIn(company.companyId, { email: "adam@screen.example", displayName: "Adam Admin", role: MemberRole.ADMIN });
    opened.push(admin);
    await open(admin, "/suppressions", "Suppressions");
    await admin.page.getByRole("button", { name: "Remove complaint+screen@customer.example from the suppression list" }).click();
    const dialog = admin.page.getByRole("dialog", { name: "Remove complaint+screen@customer.example?" });
    expect(await dialog.textContent()).toContain("Only an owner of your company may remove a complaint; ask one of your owners.");
    expect(await dialog.getByRole("textbox").count()).toBe(0);
    await ui.checkPage(admin, "suppressions-complaint-admin");
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "hidden" });

    const member = await ui.signIn(company.companyId, { email: "mia@screen.example", displayName: "Mia Member", role: MemberRole.MEMBER });
    opened.push(member);
    await open(member, "/suppressions", "Suppressions");
    await expect.poll(() => rowsOf(member).count()).toBe(2);
    expect(await member.page.getByRole("button", { name: "Add suppression" }).count()).toBe(0);
    expect(await member.page.getByRole("button", { name: /^Remove/ }).count()).toBe(0);
    await ui.checkPhone(member, "suppressions-member", [{ region: "Suppression list", columns: ["Reason", "Message", "Suppressed"] }]);
  });

  it("the Credits page shows the balance and the ledger, each entry with its message or note; the header shows the balance", async () => {
    const page = owner.page;
    await open(owner, "/credits", "Credits");
    await page.getByText("57 credits").waitFor();
    const header = page.getByRole("link", { name: "Credits: 57 left" });
    await header.waitFor();
    const rows = page.getByRole("region", { name: "Credit ledger" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(4);
    const texts = await rows.allTextContents();
    expect(texts[3]).toContain("+60");
    expect(texts[3]).toContain("test credits");
    expect(texts.slice(0, 3).every((t) => t.includes("−1") && t.includes("charge"))).toBe(true);
    await ui.checkPage(owner, "credits");
    await ui.checkPhone(owner, "credits", [{ region: "Credit ledger", columns: ["Reason", "Message or note", "When"] }]);

    await page.getByRole("combobox", { name: "Reason" }).selectOption("grant");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("reason") === "grant");
    await expect.poll(() => rows.count()).toBe(1);

    await open(owner, "/credits?reason=charge", "Credits");
    await page.getByRole("link", { name: ids.delivered }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/messages/${ids.delivered}`));
    // Not low (57 is above 50): no banner.
    expect(await page.getByText("Your Mail credits are low").count()).toBe(0);
  });

  it("below the low-balance mark every page shows the banner, and the header marks the balance", async () => {
    const low = await ui.company({ credits: 5 });
    const screen = await ui.signIn(low.companyId, { email: "lou@low.example", displayName: "Lou Owner", role: MemberRole.OWNER });
    opened.push(screen);
    const banner = screen.page.getByText("Your Mail credits are low: 5 left");
    await banner.waitFor();
    expect(await screen.page.getByRole("link", { name: "Credits: 5 left, low" }).count()).toBe(1);
    await ui.checkPage(screen, "low-credits-messages");
    await ui.checkPhone(screen, "low-credits-messages");
    for (const [path, heading] of [
      ["/suppressions", "Suppressions"],
      ["/members", "Members"],
      ["/credits", "Credits"],
    ] as const) {
      await open(screen, path, heading);
      await banner.waitFor();
    }
    await screen.page.getByRole("link", { name: "See the balance and the ledger" }).click();
    await screen.page.getByRole("heading", { level: 1, name: "Credits" }).waitFor();
  });
});
