import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EARLY_CLICK_SECONDS } from "../../src/capabilities/tracking/suspect-rules.ts";
import { CampaignsService } from "../../src/gen/mail/v1/campaigns_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import type { ReadySender } from "../support/sending-harness.ts";
import { type SmtpRecorder, startSmtpRecorder } from "../support/smtp-sink.ts";

/**
 * A campaign's copy followed by its reader, in Chromium, against the real
 * service with the SMTP email service: the copy is read where it landed
 * (an SMTP server), the reader's browser follows its tracked link to the
 * shop's page, the shop records the order, and the owner sees the click
 * and the revenue in the campaign's results on the screen.
 */
const chromiumInstalled = await chromiumAvailable("the campaign tracking browser test");

const POLL = { timeout: 60_000, interval: 500 };
const READER = "reader@readers.example";
const PERSON_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

describe.skipIf(!chromiumInstalled)("a campaign's tracked link followed in a browser", { timeout: 240_000 }, () => {
  let smtp: SmtpRecorder;
  let shop: Server;
  let shopUrl: string;
  let ui: AdminScreen;
  let company: ReadySender;
  let owner: ScreenPage;

  beforeAll(async () => {
    smtp = await startSmtpRecorder();
    // The shop the campaign links to: a page of its own, on another origin than the service.
    shop = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>Spring collection</title><h1>The spring collection</h1>");
    });
    await new Promise<void>((resolve) => shop.listen(0, "127.0.0.1", resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/spring?utm=mail`;
    ui = await startAdminScreen({ emailProvider: "smtp", smtp: { host: "127.0.0.1", port: smtp.port, secure: false, user: undefined, password: undefined } });
    company = await ui.company({ credits: 20 });
    owner = await ui.signIn(company.companyId, { email: "olive@tracking.example", displayName: "Olive Owner", role: MemberRole.OWNER });
  });
  afterAll(async () => {
    try {
      if (owner) ui.assertClean(owner);
    } finally {
      await ui?.close();
      await smtp?.close();
      await new Promise((resolve) => shop?.close(resolve));
    }
  });

  it("the reader's click on the delivered copy is counted, and the order it led to is the campaign's revenue", async () => {
    const { list } = await ui.h.forCompany(ListsService, company.companyId).createContactList({ name: "Readers" });
    const { rows } = await ui.h.db.query<{ id: string }>(
      `insert into contact (company_id, email, email_normalized, status) values ($1, $2, $2, 'subscribed') returning id`,
      [company.companyId, READER],
    );
    const contactId = rows[0]?.id ?? "";
    await ui.h.db.query(`insert into contact_list_member (company_id, list_id, contact_id) values ($1, $2, $3)`, [company.companyId, list?.id ?? "", contactId]);
    const campaigns = ui.h.forCompany(CampaignsService, company.companyId);
    const { campaign } = await campaigns.createCampaign({
      name: "Spring",
      audience: { listIds: [list?.id ?? ""] },
      content: { subject: "Spring is here", html: `<p>Hello,</p><p><a href="${shopUrl}">The spring collection</a></p>` },
      trackClicks: true,
    });
    const campaignId = campaign?.id ?? "";
    await campaigns.scheduleCampaign({ id: campaignId });

    // The copy, where it landed.
    await expect.poll(() => smtp.landedAt(READER).length, POLL).toBe(1);
    const landedAt = Date.now();
    const copy = await simpleParser(smtp.landedAt(READER)[0]?.raw ?? "");
    const tracked = [...String(copy.html).matchAll(/href="([^"]+)"/g)].map((m) => (m[1] ?? "").replaceAll("&amp;", "&")).find((href) => href.includes("/t/c/"));
    expect(tracked, String(copy.html)).toBeDefined();
    // The service's public address is the harness's own listener here.
    const trackedPath = new URL(tracked ?? "").pathname;

    // A person reads before clicking (a click at delivery is a link scanner's).
    await sleep(Math.max(0, (EARLY_CLICK_SECONDS + 1) * 1000 - (Date.now() - landedAt)));
    // A person's Chrome: headless Chromium names itself HeadlessChrome, which the suspect rules take for a scanner.
    const reader = await ui.browser.newContext({ locale: "en-GB", userAgent: PERSON_AGENT });
    try {
      const page = await reader.newPage();
      await page.goto(`${ui.origin}${trackedPath}`);
      await page.getByRole("heading", { name: "The spring collection" }).waitFor();
      expect(page.url()).toBe(shopUrl);
    } finally {
      await reader.close();
    }

    // The shop records the order the click led to.
    const key = await ui.h.newKey(company.companyId, ["mail.conversions.write"]);
    await expect
      .poll(async () => (await campaigns.getCampaignResults({ id: campaignId })).links.map((link) => [link.url, link.clicks, link.suspectClicks]), POLL)
      .toEqual([[shopUrl, 1, 0]]);
    const recorded = await ui.h.fetch("/mail/v1/conversions", {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ eventId: `order-${randomUUID()}`, eventType: "purchase", email: READER, revenue: "59.90", currency: "EUR" }),
    });
    expect(recorded.status).toBe(202);
    expect(((await recorded.json()) as { conversion: { campaignId: string | null } }).conversion.campaignId).toBe(campaignId);

    // The owner sees both on the campaign's page.
    await owner.goto(`/campaigns/${campaignId}`);
    const perLink = owner.page.getByRole("figure", { name: "Clicks per link" });
    await perLink.waitFor();
    await perLink.getByText("Clicks per link: the numbers as a table").click();
    expect(await perLink.getByRole("row", { name: /127\.0\.0\.1/ }).textContent()).toBe(`${shopUrl}110`);
    const revenue = owner.page.getByRole("region", { name: "Revenue, table" });
    expect(await revenue.getByRole("row", { name: /^EUR/ }).textContent()).toBe("EUR159.9059.9");
    await ui.checkPage(owner, "campaign-clicked");
  });
});
