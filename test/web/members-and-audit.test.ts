import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The Members and Audit tabs, walked as an owner would in headless
 * Chromium against the real service: invite a member with the `member`
 * role and hand them the sign-in link; signed in, they see no API keys or
 * Webhooks tab and those services refuse them (403); change a role, remove
 * a member (their session ends at once); read every change in the audit
 * log, filter it (the filters live in the URL, back and forward work) and
 * page back through it.
 */
const chromiumInstalled = await chromiumAvailable("the members and audit screen test");

const OWNER = "olive@members.example";
const MIA = "mia@members.example";

// Each step checks pages with axe and takes screenshots (4 per page): slower than the suite default on a busy machine.
describe.skipIf(!chromiumInstalled)("the Members and Audit tabs", { timeout: 180_000 }, () => {
  let ui: AdminScreen;
  let companyId: string;
  let owner: ScreenPage;
  let mia: ScreenPage | undefined;
  let miaLink = "";

  beforeAll(async () => {
    ui = await startAdminScreen();
    const { company } = await ui.h.admin.createCompany({ name: "Members Screen Inc.", entitlements: { api: true, smtp: false } });
    companyId = company?.id ?? "";
    owner = await ui.signIn(companyId, { email: OWNER, displayName: "Olive Owner", role: MemberRole.OWNER });
  });
  afterAll(async () => {
    // Closed whatever the pages showed: a failed check must not leave the service and its servers running.
    try {
      if (owner) ui.assertClean(owner);
      if (mia) ui.assertClean(mia);
    } finally {
      await ui?.close();
    }
  });

  /** A Connect call from the page, with the page's own session cookie (what the screen's code does). */
  async function rpcStatus(screen: ScreenPage, path: string): Promise<number> {
    return screen.page.evaluate(async (p) => {
      const response = await fetch(p, { method: "POST", headers: { "content-type": "application/json", "connect-protocol-version": "1" }, body: "{}" });
      return response.status;
    }, path);
  }

  it("invites a member with the member role and shows the sign-in link to hand over", async () => {
    const page = owner.page;
    await openPath(owner, "/members");
    await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();

    await page.getByRole("button", { name: "Invite member" }).click();
    const dialog = page.getByRole("dialog", { name: "Invite a member" });
    await dialog.getByRole("textbox", { name: "Email" }).fill(MIA);
    await dialog.getByRole("textbox", { name: "Name (optional)" }).fill("Mia Member");
    // `member` is the default role.
    expect(await dialog.getByRole("radio", { name: /^member/ }).getAttribute("aria-checked")).toBe("true");
    await ui.checkPage(owner, "members-invite");
    await dialog.getByRole("button", { name: "Send invitation" }).click();
    const invited = page.getByRole("dialog", { name: "Member invited" });
    miaLink = await invited.getByRole("textbox", { name: /Sign-in link for/ }).inputValue();
    expect(miaLink).toContain("/admin/sign-in#token=");
    // A sign-in link to hand over, for 15 minutes and once: not a secret to keep or replace.
    const words = (await invited.textContent()) ?? "";
    expect(words).toContain(`Hand this sign-in link to ${MIA}. It works once, within 15 minutes`);
    expect(words).not.toMatch(/secret|replace/i);
    await ui.checkPage(owner, "members-invited");
    await invited.getByRole("button", { name: "Done" }).click();
    const row = page.getByRole("row", { name: /Mia Member/ });
    await row.waitFor();
    expect(await row.textContent()).toContain("member");
    await ui.checkPage(owner, "members");
  });

  it("says why the last owner cannot step down, in words without a field name", async () => {
    const page = owner.page;
    owner.expectFailedCalls({ rpc: "UpdateMember", status: 400 });
    await page.getByRole("button", { name: "Change role of Olive Owner" }).click();
    const dialog = page.getByRole("dialog", { name: "Role of Olive Owner" });
    await dialog.getByRole("radio", { name: /^admin/ }).click();
    await dialog.getByRole("button", { name: "Save role" }).click();
    const refusal = dialog.getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe("At least one owner must remain; make another member owner first.");
    await ui.checkPage(owner, "members-last-owner");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect(await page.getByRole("row", { name: /Olive Owner/ }).textContent()).toContain("owner");
  });

  it("signs the member in: no API keys or Webhooks tab, and those services answer 403", async () => {
    mia = await ui.openPage();
    await mia.page.goto(`${ui.origin}/admin/sign-in${new URL(miaLink).hash}`);
    mia.expectFailedCalls(
      { rpc: "ListApiKeys", status: 403 },
      { rpc: "ListWebhookEndpoints", status: 403 },
      { rpc: "ListMembers", status: 403 },
      { rpc: "ListAuditEvents", status: 403 },
      { rpc: "GetSession", status: 401 },
    );
    const nav = mia.page.getByRole("navigation").first();
    await nav.getByRole("link", { name: "Messages" }).waitFor();
    for (const tab of ["API keys", "Webhooks", "Deliveries", "Members", "Audit"]) {
      expect(await mia.page.getByRole("link", { name: tab, exact: true }).count(), tab).toBe(0);
    }
    expect(await rpcStatus(mia, "/mail.v1.ApiKeysService/ListApiKeys")).toBe(403);
    expect(await rpcStatus(mia, "/mail.v1.WebhooksService/ListWebhookEndpoints")).toBe(403);
    expect(await rpcStatus(mia, "/mail.v1.MembersService/ListMembers")).toBe(403);
    expect(await rpcStatus(mia, "/mail.v1.AuditService/ListAuditEvents")).toBe(403);
    // The owner's session may.
    expect(await rpcStatus(owner, "/mail.v1.ApiKeysService/ListApiKeys")).toBe(200);
  });

  it("changes a member's role through the role picker", async () => {
    const page = owner.page;
    await openPath(owner, "/members");
    await page.getByRole("button", { name: "Change role of Mia Member" }).click();
    const dialog = page.getByRole("dialog", { name: "Role of Mia Member" });
    await dialog.getByRole("radio", { name: /^admin/ }).click();
    await dialog.getByRole("button", { name: "Save role" }).click();
    await dialog.waitFor({ state: "hidden" });
    const row = page.getByRole("row", { name: /Mia Member/ });
    await waitForText(row, "admin");
  });

  it("removes a member after confirming; their session ends at once", async () => {
    const page = owner.page;
    if (!mia) throw new Error("the member's screen is not open");
    expect(await rpcStatus(mia, "/mail.v1.SessionService/GetSession")).toBe(200);
    await page.getByRole("button", { name: "Remove Mia Member" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Remove Mia Member?" });
    await confirm.getByRole("button", { name: "Remove member" }).click();
    await confirm.waitFor({ state: "hidden" });
    await page.getByRole("row", { name: /Mia Member/ }).waitFor({ state: "detached" });
    expect(await rpcStatus(mia, "/mail.v1.SessionService/GetSession")).toBe(401);
  });

  it("shows every change in the audit log, with filters in the URL and paging", async () => {
    const page = owner.page;
    await openPath(owner, "/audit");
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    const rows = page.getByRole("region", { name: "Table of audit events" }).locator("tbody tr");
    await rows.first().waitFor();
    const all = (await rows.allTextContents()).join("\n");
    for (const action of ["member.invited", "member.updated", "member.removed"]) expect(all).toContain(action);
    expect(all).toContain(OWNER);
    await ui.checkPage(owner, "audit");

    await page.getByRole("textbox", { name: "Action" }).fill("member.removed");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("action") === "member.removed");
    await waitForCount(rows, 1);
    expect(await rows.first().textContent()).toContain("member.removed");
    // Back: the unfiltered log again.
    await page.goBack();
    await page.waitForURL((url) => !url.searchParams.has("action"));
    await waitForCount(rows, all.split("\n").length);

    // More than two pages of events (25 a page): the older ones come with the cursor, page after page.
    const operator = operatorKeys(ui.h.app.operatorUrl, companyId);
    for (let i = 0; i < 55; i++) await operator.createApiKey({ name: `bulk ${i}`, scopes: ["mail.events.read"] });
    await openPath(owner, "/audit?actor=operator&action=api_key.created");
    await waitForCount(rows, 25);
    const more = page.getByRole("button", { name: "Load more events" });
    await more.click();
    await waitForCount(rows, 50);
    // The next page also comes by itself when the end of the list scrolls into view.
    await more.scrollIntoViewIfNeeded();
    await waitForCount(rows, 55);
    await page.getByText("No more events.").waitFor();
  });
});

function operatorKeys(operatorUrl: string, companyId: string) {
  const asOperator: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
    req.header.set("x-mail-company-id", companyId);
    return next(req);
  };
  return createClient(ApiKeysService, createConnectTransport({ baseUrl: operatorUrl, httpVersion: "1.1", interceptors: [asOperator] }));
}

async function waitForCount(locator: { count(): Promise<number> }, expected: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const count = await locator.count();
    if (count === expected) return;
    if (Date.now() > deadline) throw new Error(`expected ${expected} rows, saw ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitForText(locator: { textContent(): Promise<string | null> }, text: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await locator.textContent())?.includes(text)) return;
    if (Date.now() > deadline) throw new Error(`"${text}" did not appear`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Opens a page of the screen and waits for its heading. */
async function openPath(screen: ScreenPage, path: string): Promise<void> {
  await screen.goto(path);
  await screen.page.locator("main h1").first().waitFor();
}
