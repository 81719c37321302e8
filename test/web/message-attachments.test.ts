import { readFile } from "node:fs/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { chromiumAvailable } from "../support/chromium.ts";
import type { ReadySender } from "../support/sending-harness.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * A message's files on its page of the administration screen, in headless
 * Chromium against the real service: listed with their sizes, downloaded
 * by a member as a file (never opened in the page), and the page saying so
 * once the content retention removed them. Axe and the guard (CSP, console
 * errors, unexpected failed calls) check every page.
 */
const chromiumInstalled = await chromiumAvailable("the message page's attachments");

const PDF = Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(123_456, 42), Buffer.from("\n%%EOF\n")]);
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
const NAME = "Facture n°42 — été.pdf";

describe.skipIf(!chromiumInstalled)("the message page: attachments", { timeout: 180_000 }, () => {
  let screen: AdminScreen;
  let shop: ReadySender;
  let member: ScreenPage;
  let id: string;

  beforeAll(async () => {
    screen = await startAdminScreen();
    shop = await screen.company();
    const response = await screen.h.send(shop.secret, {
      to: "ada@customer.test",
      subject: "Your invoice",
      html: `<p>Invoice attached.</p><img src="cid:logo" alt="Shop logo">`,
      text: "Invoice attached.",
      attachments: [
        { filename: NAME, contentType: "application/pdf", content: PDF.toString("base64") },
        { filename: "logo.png", contentType: "image/png", content: PNG.toString("base64"), contentId: "logo" },
      ],
    });
    expect(response.status).toBe(202);
    id = ((await response.json()) as { id: string }).id;
    await screen.h.waitForMessage(shop.secret, id, (m) => m.status === "sent" || m.status === "delivered");
    member = await screen.signIn(shop.companyId, { email: "mia@shop.test", displayName: "Mia Member", role: MemberRole.MEMBER });
  });
  afterAll(async () => screen?.close());

  it("lists the files with their sizes and a member downloads one as a file", async () => {
    const { page } = member;
    // The preview does not fetch inline images: the CSP blocks cid: in the sandboxed frame, as any image source it does not serve.
    member.expectBlockedImages("cid:logo");
    await member.goto(`/messages/${id}`);
    const list = page.getByRole("region", { name: "Attachments" });
    await list.getByText(NAME).waitFor();
    const rows = (await list.getByRole("row").allInnerTexts()).map((row) => row.replace(/\s+/g, " ").trim());
    expect(rows).toHaveLength(3);
    expect(rows).toContainEqual(expect.stringMatching(/^logo\.png image\/png 70 B inline \(cid:logo\) Download$/));
    expect(rows).toContainEqual(`${NAME} application/pdf 123.5 KB attached Download`);

    const [download] = await Promise.all([page.waitForEvent("download"), list.getByRole("button", { name: `Download ${NAME}` }).click()]);
    expect(download.suggestedFilename()).toBe(NAME);
    const path = await download.path();
    expect((await readFile(path)).equals(PDF)).toBe(true);
    // Saved, not opened: the screen stays where it was, no new page.
    expect(page.url()).toBe(`${screen.origin}/admin/messages/${id}`);
    expect(member.context.pages()).toHaveLength(1);
    await screen.checkPage(member, "message-attachments");
  });

  it("says so once the content retention removed the content", async () => {
    const sql = new pg.Client({ connectionString: screen.h.db.url });
    await sql.connect();
    try {
      await sql.query("update message set created_at = now() - interval '40 days' where id = $1", [id]);
    } finally {
      await sql.end();
    }
    await screen.h.app.messaging.contentRetention.removeExpired();
    const { page } = member;
    await member.goto(`/messages/${id}`);
    await page.getByText("The content of this message (HTML, text and attachments) was removed", { exact: false }).waitFor();
    expect(await page.getByRole("region", { name: "Attachments" }).count()).toBe(0);
    await screen.checkPage(member, "message-content-removed");
  });
});
