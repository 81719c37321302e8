import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import type { ReadySender } from "../support/sending-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import { startTestDnsServer, type TestDnsServer } from "../support/dns-server.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The Domains page, walked in headless Chromium against the real service
 * and a local DNS server: an owner adds a domain, copies a record's value
 * (announced), publishes the records and presses "Check now", and the
 * domain turns verified with each record found; a sender is added on it and
 * made the default. A member reads without buttons. The page passes axe,
 * light and dark, and fits a 390 px phone.
 */
const chromiumInstalled = await chromiumAvailable("the domains screen test");

describe.skipIf(!chromiumInstalled)("the Domains page", { timeout: 240_000 }, () => {
  let ui: AdminScreen;
  let dns: TestDnsServer;
  let company: ReadySender;
  let owner: ScreenPage;
  const opened: ScreenPage[] = [];

  beforeAll(async () => {
    dns = await startTestDnsServer();
    ui = await startAdminScreen({ dnsServers: [dns.address] });
    company = await ui.company();
    owner = await ui.signIn(company.companyId, { email: "olive@domains-screen.example", displayName: "Olive Owner", role: MemberRole.OWNER });
    opened.push(owner);
  }, 240_000);
  afterAll(async () => {
    try {
      for (const screen of opened) ui.assertClean(screen);
    } finally {
      await ui?.close();
      await dns?.close();
    }
  });

  async function open(screen: ScreenPage): Promise<void> {
    await screen.goto("/domains");
    await screen.page.getByRole("heading", { level: 1, name: "Domains" }).waitFor();
  }

  it("an owner adds a domain, copies a value, publishes the records and checks now: verified, each record found", async () => {
    const page = owner.page;
    await owner.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: ui.origin });
    await open(owner);
    await page.getByRole("button", { name: "Add domain" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a sending domain" });
    await dialog.getByRole("textbox", { name: "Domain" }).fill("Screen-Domains.example");
    await dialog.getByRole("button", { name: "Add domain" }).click();
    const section = page.getByRole("region", { name: "screen-domains.example" });
    await section.waitFor();
    expect(await section.textContent()).toContain("pending");
    const records = section.getByRole("list", { name: "DNS records of screen-domains.example" }).getByRole("listitem");
    await expect.poll(() => records.count()).toBe(4);
    expect(await records.allTextContents()).toEqual(Array(4).fill(expect.stringContaining("not checked")));

    // A value copied, and the copy announced.
    await section.getByRole("button", { name: "Copy: value of the dmarc record" }).click();
    await section.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe("v=DMARC1; p=none");

    await ui.checkPage(owner, "domains");

    // Published as shown (read through the API, as a customer would read the page).
    const listed = await ui.h.fetch("/mail/v1/domains", { headers: { authorization: `Bearer ${company.secret}` } });
    const { items } = (await listed.json()) as { items: Array<{ domain: string; records: Array<{ type: string; name: string; value: string }> }> };
    for (const record of items.find((d) => d.domain === "screen-domains.example")?.records ?? []) {
      if (record.type === "txt") dns.addTxt(record.name, record.value);
      if (record.type === "mx") dns.addMx(record.name, record.value.split(" ")[1] ?? "", Number(record.value.split(" ")[0]));
    }
    await section.getByRole("button", { name: "Check now: screen-domains.example" }).click();
    await section.getByText("Checked: verified.").waitFor();
    await expect.poll(async () => (await records.allTextContents()).every((text) => text.includes("found"))).toBe(true);
    expect(await section.textContent()).not.toContain("never");
    await ui.checkPage(owner, "domains-verified");
    // The seeded domain was verified by an operator's override: the page says so rather than "checks the records daily".
    const seeded = page.getByRole("region", { name: company.fromEmail.split("@")[1] ?? "" });
    expect(await seeded.textContent()).toContain("An operator marked it verified without DNS");

    // A sender on it, made the default.
    await page.getByRole("button", { name: "Add sender" }).click();
    const add = page.getByRole("dialog", { name: "Add a sender" });
    await add.getByRole("textbox", { name: "Email address" }).fill("hello@screen-domains.example");
    await add.getByRole("textbox", { name: "Display name" }).fill("Hello");
    await add.getByRole("button", { name: "Add sender" }).click();
    await page.getByRole("button", { name: "Make default: hello@screen-domains.example" }).click();
    await expect.poll(async () => (await page.getByRole("row", { name: /hello@screen-domains\.example/ }).textContent()) ?? "").toContain("default");

    await ui.checkPhone(owner, "domains", [{ region: "Table of senders", columns: ["Default", "May send"], actions: [/^Remove/] }]);
  });

  it("a member reads the records and senders without buttons to change them", async () => {
    const member = await ui.signIn(company.companyId, { email: "mo@domains-screen.example", role: MemberRole.MEMBER });
    opened.push(member);
    await open(member);
    await member.page.getByRole("region", { name: "screen-domains.example" }).waitFor();
    expect(await member.page.getByRole("button", { name: "Add domain" }).count()).toBe(0);
    expect(await member.page.getByRole("button", { name: /^Check now/ }).count()).toBe(0);
    expect(await member.page.getByRole("button", { name: "Add sender" }).count()).toBe(0);
    // Copying is for everyone.
    expect(await member.page.getByRole("button", { name: /^Copy: / }).count()).toBeGreaterThan(0);
    await ui.checkPhone(member, "domains-member", [{ region: "Table of senders", columns: ["Default"] }]);
  });
});
