import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import type { ReadySender } from "../support/sending-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import { type AdminScreen, SCREENSHOTS_DIR, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The overview, the screen's first page, walked in headless Chromium
 * against the real service (simulator, Temporal): after real sends (the
 * simulator's delivered, bounce and complaint addresses) it shows the
 * day's counts, the charts (Recharts' SVG under the screen's strict CSP:
 * the guard fails the test on any violation or console error), the
 * providers' limits on the rate charts, the same numbers as tables, the
 * leading tags, the balance and the domains' state. Axe, light and dark,
 * 1280 and 390 px; the screenshot in docs/screenshots.
 */
const chromiumInstalled = await chromiumAvailable("the overview screen test");

const DOCS_SCREENSHOTS = join(import.meta.dirname, "../../docs/screenshots");

describe.skipIf(!chromiumInstalled)("the Overview page", { timeout: 240_000 }, () => {
  let ui: AdminScreen;
  let company: ReadySender;
  let member: ScreenPage;

  beforeAll(async () => {
    ui = await startAdminScreen();
    company = await ui.company({ credits: 40 });
    const ids: [string, string][] = [];
    for (const [to, tags, status] of [
      ["delivered@customer.example", { receipt: "1" }, "delivered"],
      ["delivered+2@customer.example", { receipt: "2" }, "delivered"],
      ["delivered+3@customer.example", { welcome: "a" }, "delivered"],
      ["bounce@customer.example", { receipt: "3" }, "bounced"],
      ["complaint@customer.example", { welcome: "b" }, "complained"],
    ] as const) {
      const response = await ui.h.send(company.secret, { to, subject: "Your receipt", html: "<p>Thanks</p>", tags });
      ids.push([((await response.json()) as { id: string }).id, status]);
    }
    for (const [id, status] of ids) await ui.h.waitForMessage(company.secret, id, (m) => m.status === status);
    member = await ui.signIn(company.companyId, { email: "mia@overview.example", displayName: "Mia Member", role: MemberRole.MEMBER });
  });
  afterAll(async () => {
    try {
      if (member) ui.assertClean(member);
    } finally {
      await ui?.close();
    }
  });

  it("is the first page: the range's totals, the balance, the domains' state", async () => {
    const { page } = member;
    expect(page.url()).toBe(`${ui.origin}/admin/overview`);
    const totals = page.getByRole("region", { name: "Last 30 days" });
    await totals.getByText("Accepted").waitFor();
    expect((await totals.textContent())?.replace(/\s+/g, " ")).toMatch(/Accepted5Delivered4Bounce rate20 %Complaint rate20 %/);
    expect(await page.getByRole("region", { name: "Credits" }).textContent()).toContain("35 left");
    // The company's domain, verified (the harness verifies it), linking to its records.
    const domains = page.getByRole("region", { name: "Sending domains" });
    const domain = company.fromEmail.split("@")[1] ?? "";
    await domains.getByRole("link", { name: domain }).waitFor();
    expect((await domains.textContent())?.replace(/\s+/g, " ")).toContain(`${domain} verified`);
    expect(await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Overview" }).getAttribute("aria-current")).toBe("page");
  });

  it("draws the volume and the rates with the providers' limits; the same numbers are in tables", async () => {
    const { page } = member;
    const volume = page.getByRole("figure", { name: "Volume by outcome" });
    // Today's stacked bars: delivered, bounced, complained (Recharts' SVG, coloured by the stylesheet).
    await expect.poll(() => volume.locator(".chart-delivered path").count()).toBeGreaterThan(0);
    expect(await volume.locator(".chart-bounced path").count()).toBeGreaterThan(0);
    // Browser code: this project's TypeScript has no DOM types.
    const fill = await volume
      .locator(".chart-delivered path")
      .first()
      .evaluate((element) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(element).fill);
    expect(fill).toBe("rgb(26, 127, 55)");
    const bounce = page.getByRole("figure", { name: "Bounce rate" });
    expect(await bounce.locator(".chart-threshold-label").allTextContents()).toEqual(["5 % review", "10 % pause"]);
    const complaint = page.getByRole("figure", { name: "Complaint rate" });
    expect(await complaint.locator(".chart-threshold-label").allTextContents()).toEqual(["0.1 % keep below", "0.3 % limit"]);

    // The table view: today's row with every count and the rates.
    await volume.getByText("Volume by outcome: the numbers as a table").click();
    const table = volume.getByRole("table", { name: "Messages by outcome, per day" });
    const rows = table.locator("tbody tr");
    expect(await rows.count()).toBe(30);
    const today = (await rows.last().locator("th, td").allTextContents()).slice(1);
    // Accepted, sent, delivered, bounced, complained, rejected, failed, suppressed; (deferred: the pace's business); the rates.
    expect(today.slice(0, 8)).toEqual(["5", "5", "4", "1", "1", "0", "0", "0"]);
    expect(today.slice(9)).toEqual(["20 %", "20 %"]);
    await bounce.getByText("Bounce rate: the numbers as a table").click();
    expect(await bounce.getByRole("table").locator("tbody tr").last().locator("td").allTextContents()).toEqual(["5", "20 %"]);
  });

  it("lists the leading tags by volume and by bounce rate", async () => {
    const { page } = member;
    const byVolume = page.getByRole("region", { name: "Tags by volume" });
    expect(await byVolume.locator("tbody th").allTextContents()).toEqual(["receipt", "welcome"]);
    const byBounce = page.getByRole("region", { name: "Tags by bounce rate" });
    expect(await byBounce.locator("tbody tr").first().locator("th, td").allTextContents()).toEqual(["receipt", "3", "33.33 %"]);
    expect(await page.getByRole("region", { name: "Templates by volume" }).textContent()).toContain("No template in this range.");
  });

  it("switches the range; passes axe light and dark at 1280 and 390 px, with no CSP violation or console error", async () => {
    const { page } = member;
    await page.getByRole("navigation", { name: "Range" }).getByRole("link", { name: "7 days" }).click();
    await page.waitForURL((url) => url.searchParams.get("days") === "7");
    await page.getByRole("region", { name: "Last 7 days" }).waitFor();
    await page.getByRole("figure", { name: "Volume by outcome" }).getByText("Volume by outcome: the numbers as a table").click();
    await expect.poll(() => page.getByRole("table", { name: "Messages by outcome, per day" }).locator("tbody tr").count()).toBe(7);
    await ui.checkPage(member, "overview");
    await ui.checkPhone(member, "overview");
    await mkdir(DOCS_SCREENSHOTS, { recursive: true });
    for (const name of ["overview-light-1280", "overview-dark-1280", "overview-phone-light"]) {
      await copyFile(join(SCREENSHOTS_DIR, `${name}.png`), join(DOCS_SCREENSHOTS, `admin-${name}.png`));
    }
  });
});
