import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignsService, CampaignState } from "../../src/gen/mail/v1/campaigns_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import type { ReadySender } from "../support/sending-harness.ts";

/**
 * The Campaigns tab, walked in headless Chromium against the real service
 * (Temporal dev server, the simulator): an owner writes a draft to a list,
 * sees before sending how many will receive it and how many are skipped or
 * suppressed, sends it now and watches the state move to sent and the
 * results counters fill in without reloading. The guard fails the test on
 * any CSP violation or console error; each page passes axe, light and dark,
 * and the list fits a 390 px phone.
 */
const chromiumInstalled = await chromiumAvailable("the campaigns screen test");

/** The campaign sends through a Temporal workflow on a shared machine: generous. */
const POLL = { timeout: 60_000, interval: 500 };

describe.skipIf(!chromiumInstalled)("the Campaigns tab and its editor", { timeout: 240_000 }, () => {
  let ui: AdminScreen;
  let company: ReadySender;
  let owner: ScreenPage;

  /** Contacts written straight to the database: the audience rules read statuses, whatever set them. */
  async function contact(listId: string, email: string, status: string): Promise<void> {
    const { rows } = await ui.h.db.query<{ id: string }>(
      `insert into contact (company_id, email, email_normalized, status) values ($1, $2, lower($2), $3) returning id`,
      [company.companyId, email, status],
    );
    await ui.h.db.query(`insert into contact_list_member (company_id, list_id, contact_id) values ($1, $2, $3)`, [company.companyId, listId, rows[0]?.id ?? ""]);
  }

  beforeAll(async () => {
    ui = await startAdminScreen();
    company = await ui.company({ credits: 100 });
    const { list } = await ui.h.forCompany(ListsService, company.companyId).createContactList({ name: "Newsletter" });
    const listId = list?.id ?? "";
    await contact(listId, "ann@readers.example", "subscribed");
    await contact(listId, "bob@readers.example", "subscribed");
    await contact(listId, "pat@readers.example", "pending");
    owner = await ui.signIn(company.companyId, { email: "olive@campaigns.example", displayName: "Olive Owner", role: MemberRole.OWNER });
  });
  afterAll(async () => {
    try {
      if (owner) ui.assertClean(owner);
    } finally {
      await ui?.close();
    }
  });

  it("writes a draft to a list, shows the audience preview, sends now and follows the state and the counters", async () => {
    const page = owner.page;
    await owner.goto("/campaigns");
    await page.getByRole("heading", { level: 1, name: "Campaigns" }).waitFor();
    await page.getByText("No campaign yet.").waitFor();
    await page.getByRole("link", { name: "New campaign" }).click();
    await page.getByRole("heading", { level: 1, name: "New campaign" }).waitFor();

    await page.getByRole("textbox", { name: "Name" }).fill("Spring news");
    await page.getByRole("checkbox", { name: /Newsletter/ }).check();
    await page.getByRole("textbox", { name: "Subject" }).fill("Spring is here, {{ firstName | default:reader }}");
    await page.getByRole("textbox", { name: "HTML" }).fill('<p>Hello,</p><p><a href="https://shop.example/spring">The spring collection</a></p>');
    await page.getByRole("button", { name: "Create draft" }).click();
    await page.getByRole("heading", { level: 1, name: "Spring news" }).waitFor();

    // Two subscribed contacts receive it; the pending one is skipped.
    const preview = page.getByTestId("audience-preview");
    await expect.poll(() => preview.textContent(), POLL).toContain("2 will receive it");
    expect(await preview.textContent()).toContain("1 skipped");
    expect(await page.getByText(/your time zone, Europe\/Berlin/).count()).toBe(1);
    // The content as a recipient gets it, rendered by the server with the member's address as the recipient.
    const contentPreview = page.getByRole("region", { name: "Preview" });
    await expect.poll(() => contentPreview.getByTestId("preview-subject").textContent(), POLL).toBe("Spring is here, reader");
    const frame = contentPreview.frameLocator('iframe[title="Preview of the HTML"]');
    expect(await frame.getByRole("link", { name: "The spring collection" }).getAttribute("href")).toBe("https://shop.example/spring");
    await ui.checkPage(owner, "campaign-draft");

    await page.getByRole("button", { name: "Send a test to me" }).click();
    await page.getByRole("status").filter({ hasText: "Test sent to olive@campaigns.example" }).waitFor();

    await page.getByRole("button", { name: "Send now" }).click();
    const results = page.getByRole("table").filter({ hasText: "Accepted" });
    const counter = async (name: string) => (await results.getByRole("row", { name: new RegExp(`^${name} `) }).textContent())?.replace(name, "").trim();
    // The page reads the campaign again by itself while it sends: no reload.
    await expect.poll(() => page.getByTestId("campaign-state").textContent(), POLL).toBe("sent");
    const api = ui.h.forCompany(CampaignsService, company.companyId);
    const [listed] = (await api.listCampaigns({})).items;
    await expect.poll(() => counter("Accepted"), { ...POLL, message: JSON.stringify(listed?.counters) }).toBe("2");
    expect(await counter("Audience")).toBe("3");
    expect(await counter("Skipped")).toBe("1");
    expect(await counter("Failed")).toBe("0");
    expect(await counter("Waiting")).toBe("0");
    const [stored] = (await api.listCampaigns({})).items;
    expect(stored?.state).toBe(CampaignState.SENT);
    // Its one tracked link is listed before anyone clicked; no engagement, no revenue yet.
    const perLink = page.getByRole("figure", { name: "Clicks per link" });
    await perLink.waitFor();
    await perLink.getByText("Clicks per link: the numbers as a table").click();
    expect(await perLink.getByRole("region", { name: "Clicks per link, table" }).textContent()).toContain("https://shop.example/spring");
    expect(await page.getByText("No opens or clicks yet.").count()).toBe(1);
    expect(await page.getByText("No conversion attributed yet.").count()).toBe(1);
    await ui.checkPage(owner, "campaign-sent");

    // Engagement and a conversion, written where tracking and conversions record them: the results read them back.
    const campaignId = stored?.id ?? "";
    const { rows: links } = await ui.h.db.query<{ link_id: string }>(`select link_id from tracking_link where company_id = $1 and campaign_id = $2`, [company.companyId, campaignId]);
    const { rows: recipients } = await ui.h.db.query<{ id: string }>(`select id from campaign_recipient where company_id = $1 and campaign_id = $2`, [company.companyId, campaignId]);
    const linkId = links[0]?.link_id ?? "";
    // Two recipients open; the first clicks (its first verified click), the second's click looks automated.
    for (const [i, recipient] of recipients.slice(0, 2).entries()) {
      await ui.h.db.query(
        `insert into tracking_hit (id, company_id, campaign_id, recipient_id, kind, link_id, suspect, reasons, occurred_at)
         values (gen_random_uuid(), $1, $2, $3, 'open', null, false, '', now()), (gen_random_uuid(), $1, $2, $3, 'click', $4, $5, '', now())`,
        [company.companyId, campaignId, recipient.id, linkId, i > 0],
      );
    }
    await ui.h.db.query(
      `insert into tracking_first (company_id, recipient_id, kind, link_id, campaign_id, occurred_at) values ($1, $2, 'click', $3, $4, now())`,
      [company.companyId, recipients[0]?.id ?? "", linkId, campaignId],
    );
    await ui.h.db.query(
      `insert into conversion (company_id, event_id, event_type, email, revenue, currency, status, occurred_at, campaign_id, link_id, clicked_at)
       values ($1, 'order-1', 'purchase', 'ann@readers.example', 59.90, 'EUR', 'completed', now(), $2, $3, now())`,
      [company.companyId, campaignId, linkId],
    );
    await page.reload();
    const timeline = page.getByRole("figure", { name: "Opens and clicks over time" });
    await timeline.waitFor();
    await timeline.getByText("Opens and clicks over time: the numbers as a table").click();
    expect(await timeline.getByRole("row").nth(1).textContent()).toMatch(/21$/); // 2 opens, 1 verified click
    await perLink.getByText("Clicks per link: the numbers as a table").click();
    expect(await perLink.getByRole("row", { name: /shop\.example\/spring/ }).textContent()).toBe("https://shop.example/spring111"); // 1 verified click, 1 recipient, 1 automated
    const revenue = page.getByRole("region", { name: "Revenue, table" });
    expect(await revenue.getByRole("row", { name: /^EUR/ }).textContent()).toBe("EUR159.9059.9");
    await ui.checkPage(owner, "campaign-results");

    await owner.goto("/campaigns");
    const rows = page.getByRole("region", { name: "Table of campaigns" }).locator("tbody tr");
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await rows.first().textContent()).toContain("sent");
    await ui.checkPage(owner, "campaigns");
    await ui.checkPhone(owner, "campaigns", [{ region: "Table of campaigns", columns: ["State", "Accepted"] }]);
  });
});
