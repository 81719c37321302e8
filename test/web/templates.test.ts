import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import type { ReadySender } from "../support/sending-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The Templates tab, walked in headless Chromium against the real service:
 * an owner opens a template, types in the CodeMirror editor and watches the
 * sandboxed preview follow (rendered by the server with the sample values
 * typed into the inputs of the variables it detected), saves a version,
 * restores an older one and sends a test to their own address; a member
 * reads and previews without buttons. CodeMirror runs under the screen's
 * strict CSP (its styles are constructed stylesheets): the guard fails the
 * test on any CSP violation or console error. Each page passes axe, light
 * and dark, and fits a 390 px phone.
 */
const chromiumInstalled = await chromiumAvailable("the templates screen test");

/** The preview waits for typing to pause, then for the server: generous on a shared machine. */
const POLL = { timeout: 20_000 };

describe.skipIf(!chromiumInstalled)("the Templates tab and its editor", { timeout: 240_000 }, () => {
  let ui: AdminScreen;
  let company: ReadySender;
  let owner: ScreenPage;
  let templateId: string;
  const opened: ScreenPage[] = [];

  beforeAll(async () => {
    ui = await startAdminScreen();
    company = await ui.company();
    const { template } = await ui.h.forCompany(TemplatesService, company.companyId).putTemplate({
      name: "order-confirmed",
      subject: "Order {{ orderId }} confirmed",
      html: "<h1>Thanks, {{ firstName | default:there }}!</h1>\n<p>Your order {{ orderId }} is confirmed.</p>",
      text: "Thanks, {{ firstName }}!",
    });
    templateId = template?.id ?? "";
    owner = await ui.signIn(company.companyId, { email: "olive@templates.example", displayName: "Olive Owner", role: MemberRole.OWNER });
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

  const previewBody = (screen: ScreenPage) => screen.page.frameLocator('iframe[title="Preview of the HTML"]').locator("body");

  it("lists the templates; a row opens the editor", async () => {
    await open(owner, "/templates", "Templates");
    const rows = owner.page.getByRole("region", { name: "Table of templates" }).locator("tbody tr");
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await rows.first().textContent()).toContain("Order {{ orderId }} confirmed");
    await ui.checkPage(owner, "templates");
    await ui.checkPhone(owner, "templates", [{ region: "Table of templates", columns: ["Subject", "Version", "Updated"] }]);
    await owner.page.getByRole("link", { name: "order-confirmed" }).click();
    await owner.page.waitForURL((url) => url.pathname.endsWith(`/templates/${templateId}`));
    await owner.page.getByRole("heading", { level: 1, name: "order-confirmed" }).waitFor();
  });

  it("typing in the editor updates the sandboxed preview; detected variables get sample inputs; a save makes a version", async () => {
    const page = owner.page;
    await open(owner, `/templates/${templateId}`, "order-confirmed");
    // The server's rendering: the fallback shows until a sample value is typed.
    await expect.poll(() => previewBody(owner).textContent(), POLL).toContain("Thanks, there!");
    const frame = page.locator('iframe[title="Preview of the HTML"]');
    expect(await frame.getAttribute("sandbox")).toBe("");

    await page.getByRole("textbox", { name: "firstName" }).fill("Ann <b>");
    await page.getByRole("textbox", { name: "orderId" }).fill("1001");
    await expect.poll(() => previewBody(owner).textContent(), POLL).toContain("Thanks, Ann <b>!");
    expect(await page.getByTestId("preview-subject").textContent()).toBe("Order 1001 confirmed");
    // A value is text: escaped, never markup.
    expect(await previewBody(owner).locator("b").count()).toBe(0);

    // Type in CodeMirror: a new variable appears with its own input; unsafe markup never reaches the preview.
    const editor = page.getByRole("textbox", { name: "HTML" });
    await editor.click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type('\n<p class="coupon">Your code: {{ coupon }}</p><script>alert(1)</script>');
    const coupon = page.getByRole("textbox", { name: "coupon" });
    await coupon.waitFor();
    await coupon.fill("SAVE10");
    await expect.poll(() => previewBody(owner).textContent(), POLL).toContain("Your code: SAVE10");
    expect(await previewBody(owner).locator("script").count()).toBe(0);
    await ui.checkPage(owner, "template-editor");
    await ui.checkPhone(owner, "template-editor");

    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.getByText("Saved (version 2).").waitFor();
    const versions = page.getByRole("region", { name: "Table of versions" }).locator("tbody tr");
    await expect.poll(() => versions.count(), POLL).toBe(2);
    const stored = await ui.h.forCompany(TemplatesService, company.companyId).getTemplate({ name: templateId });
    expect(stored.template?.html).toContain("Your code: {{ coupon }}");
  });

  it("restores an older version (a new version with its content) and sends a test to the member's own address", async () => {
    const page = owner.page;
    await open(owner, `/templates/${templateId}`, "order-confirmed");
    await page.getByRole("button", { name: "Restore version 1" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Restore version 1 of order-confirmed?" });
    await dialog.getByRole("button", { name: "Restore version" }).click();
    await page.getByText("Saved (version 3).").waitFor();
    await expect.poll(() => page.getByRole("textbox", { name: "HTML" }).textContent(), POLL).not.toContain("coupon");
    const stored = await ui.h.forCompany(TemplatesService, company.companyId).getTemplate({ name: templateId });
    expect(stored.template?.version).toBe(3);
    expect(stored.template?.html).not.toContain("coupon");

    await page.getByRole("textbox", { name: "firstName" }).fill("Olive");
    await page.getByRole("button", { name: "Send a test to me" }).click();
    const sent = page.getByRole("status").filter({ hasText: "Sent to" });
    await sent.waitFor();
    expect(await sent.textContent()).toContain("olive@templates.example");
    const messageId = String(await sent.getByRole("link", { name: "the message" }).getAttribute("href")).split("/").pop() ?? "";
    const message = await ui.h.waitForMessage(company.secret, messageId, (m) => m.status !== "queued");
    expect(message).toMatchObject({ recipient: "olive@templates.example", templateId });
    await ui.checkPage(owner, "template-editor-restored");
  });

  it("a member reads and previews without buttons", async () => {
    const member = await ui.signIn(company.companyId, { email: "mia@templates.example", displayName: "Mia Member", role: MemberRole.MEMBER });
    opened.push(member);
    await open(member, `/templates/${templateId}`, "order-confirmed");
    await expect.poll(() => previewBody(member).textContent(), POLL).toContain("Thanks, there!");
    await member.page.getByRole("textbox", { name: "firstName" }).fill("Mia");
    await expect.poll(() => previewBody(member).textContent(), POLL).toContain("Thanks, Mia!");
    for (const name of ["Save as a new version", "Delete order-confirmed", "Send a test to me", "Restore version 1"]) {
      expect(await member.page.getByRole("button", { name }).count(), name).toBe(0);
    }
    expect(await member.page.getByRole("textbox", { name: "HTML" }).getAttribute("contenteditable")).toBe("false");
    await ui.checkPage(member, "template-member");
  });
});
