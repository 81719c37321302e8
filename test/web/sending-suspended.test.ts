import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { chromiumAvailable } from "../support/chromium.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The deliverability guard's banner, in headless Chromium against the real
 * service: while a company's sending is suspended every page starts with
 * why, with the numbers of the window that crossed the line and the limit
 * (read from SendingStatusService); a company that may send sees none. The
 * suspension itself is the guard's (test/sending/deliverability-guard.test.ts
 * drives it end to end); here its row is written as the guard writes it.
 * Passes axe, light and dark, and fits a 390 px phone.
 */
const chromiumInstalled = await chromiumAvailable("the sending-suspended banner test");

describe.skipIf(!chromiumInstalled)("the sending-suspended banner", { timeout: 240_000 }, () => {
  let ui: AdminScreen;
  const opened: ScreenPage[] = [];

  beforeAll(async () => {
    ui = await startAdminScreen();
  });
  afterAll(async () => {
    try {
      for (const screen of opened) ui.assertClean(screen);
    } finally {
      await ui?.close();
    }
  });

  async function suspend(companyId: string, reason: string, sends: number, bounces: number, complaints: number): Promise<void> {
    await ui.h.db.query(
      `insert into sending_guard (company_id, suspended_at, reason, sends, bounces, complaints, window_from)
       values ($1, now(), $2, $3, $4, $5, now() - interval '24 hours')`,
      [companyId, reason, sends, bounces, complaints],
    );
  }

  async function open(screen: ScreenPage, path: string, heading: string): Promise<void> {
    await screen.goto(path);
    await screen.page.getByRole("heading", { level: 1, name: heading }).waitFor();
  }

  it("a suspended company sees why on every page, with the numbers and the limit", async () => {
    const company = await ui.company();
    await suspend(company.companyId, "bounce_rate", 211, 11, 0);
    const screen = await ui.signIn(company.companyId, { email: "sue@guard.example", displayName: "Sue Owner", role: MemberRole.OWNER });
    opened.push(screen);
    const banner = screen.page.getByRole("status", { name: "Sending is suspended" });
    await banner.waitFor();
    const text = (await banner.textContent()) ?? "";
    expect(text).toContain("11 of the last 211 emails bounced: 5.21 %, above the limit of 5 %.");
    expect(text).toContain("each message fails with SENDING_SUSPENDED and its credit is returned");
    await ui.checkPage(screen, "sending-suspended-messages");
    await ui.checkPhone(screen, "sending-suspended-messages");
    for (const [path, heading] of [
      ["/credits", "Credits"],
      ["/members", "Members"],
    ] as const) {
      await open(screen, path, heading);
      await banner.waitFor();
    }
    await screen.page.getByRole("link", { name: "the bounced addresses" }).click();
    await screen.page.getByRole("heading", { level: 1, name: "Suppressions" }).waitFor();
    expect(new URL(screen.page.url()).searchParams.get("reason")).toBe("bounce");
  });

  it("a complaint-rate suspension names the complaints; a member reads it too; a company that may send sees no banner", async () => {
    const company = await ui.company();
    await suspend(company.companyId, "complaint_rate", 1000, 2, 4);
    const member = await ui.signIn(company.companyId, { email: "max@guard.example", displayName: "Max Member", role: MemberRole.MEMBER });
    opened.push(member);
    const banner = member.page.getByRole("status", { name: "Sending is suspended" });
    await banner.waitFor();
    expect(await banner.textContent()).toContain("4 of the last 1,000 emails drew a spam complaint: 0.4 %, above the limit of 0.3 %.");

    const fine = await ui.company();
    const other = await ui.signIn(fine.companyId, { email: "fay@fine.example", displayName: "Fay Owner", role: MemberRole.OWNER });
    opened.push(other);
    await open(other, "/credits", "Credits");
    expect(await other.page.getByRole("status", { name: "Sending is suspended" }).count()).toBe(0);
  });
});
