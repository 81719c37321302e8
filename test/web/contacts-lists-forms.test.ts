import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { bearer } from "../support/api-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import type { ReadySender } from "../support/sending-harness.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The Contacts, Lists and Forms tabs, walked in headless Chromium against
 * the real service (PostgreSQL, a Temporal dev server and worker, the
 * simulator): a list and a form are created in the browser (the form with
 * its own fields, a refusal landing on the field the server names), the
 * hosted page's address and the HTML snippet are copied, and the snippet's
 * button opens the hosted page; sign-ups are counted; a contact's page
 * shows its fields, the consent a form recorded, its lists, a message sent
 * to it and a recorded conversion; a member reads without change controls.
 * Every page is checked by axe and the guard (no CSP violation, console
 * error or unannounced failed call), light and dark, at 1280 and 390 px,
 * with each list's key columns inside a phone's screen.
 */
const chromiumInstalled = await chromiumAvailable("the contacts, lists and forms screen test");

// Each step checks pages with axe and takes screenshots: generous limits on a shared machine.
describe.skipIf(!chromiumInstalled)("the Contacts, Lists and Forms tabs", { timeout: 240_000 }, () => {
  let ui: AdminScreen;
  let shop: ReadySender;
  let owner: ScreenPage;
  let adaId = "";
  let messageId = "";
  let weeklyId = "";
  /** The hosted page's address as the screen shows it, and where this test's service answers it. */
  let shownUrl = "";
  let formUrl = "";
  let publicId = "";

  function post(path: string, body: unknown): Promise<Response> {
    return ui.h.fetch(path, { method: "POST", ...bearer(shop.secret, { "content-type": "application/json" }), body: JSON.stringify(body) });
  }

  async function upsert(body: Record<string, unknown>): Promise<string> {
    const response = await post("/mail/v1/contacts", body);
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  }

  /** A visitor's sign-up on the hosted page: the page's own token, then the post. */
  async function signUp(email: string, extra: Record<string, string> = {}): Promise<void> {
    const path = new URL(formUrl).pathname;
    const page = await ui.h.fetch(path);
    const token = /name="_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
    const response = await ui.h.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _token: token, email, ...extra }).toString(),
    });
    expect(response.status).toBe(200);
  }

  async function open(screen: ScreenPage, path: string, heading: string | RegExp): Promise<void> {
    await screen.goto(path);
    await screen.page.getByRole("heading", { level: 1, name: heading }).waitFor();
  }

  async function clipboard(screen: ScreenPage): Promise<string> {
    return (await screen.page.evaluate("navigator.clipboard.readText()")) as string;
  }

  beforeAll(async () => {
    ui = await startAdminScreen();
    shop = await ui.h.readySender({
      credits: 100,
      scopes: ["mail.transactional.send", "mail.events.read", "mail.contacts.write", "mail.conversions.write", "mail.admin"],
    });
    adaId = await upsert({
      email: "Ada@Contacts.example",
      firstName: "Ada",
      lastName: "Lovelace",
      company: "Analytical Engines",
      tags: ["vip"],
      attributes: { plan: "pro", seats: 3 },
      consent: { source: "checkout", reference: "order 1001" },
    });
    const sent = await ui.h.send(shop.secret, { to: "ada@contacts.example", subject: "Your receipt for order 1001", html: "<p>Thanks.</p>" });
    expect(sent.status).toBe(202);
    messageId = ((await sent.json()) as { id: string }).id;
    await ui.h.waitForMessage(shop.secret, messageId, (m) => m.status === "sent" || m.status === "delivered");
    const conversion = await post("/mail/v1/conversions", { eventId: "order-1001", eventType: "purchase", email: "ada@contacts.example", revenue: "49.95", currency: "EUR" });
    expect(conversion.status).toBe(202);
    owner = await ui.signIn(shop.companyId, { email: "olive@contacts.example", displayName: "Olive Owner", role: MemberRole.OWNER });
    await owner.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: ui.origin });
  });
  afterAll(async () => {
    try {
      if (owner) ui.assertClean(owner);
    } finally {
      await ui?.close();
    }
  });

  it("creates a list in the browser, refuses a taken name on its field, counts its members, renames and deletes it after confirming", async () => {
    const { page } = owner;
    await open(owner, "/lists", "Lists");
    await page.getByText("No list yet.").waitFor();
    await page.getByRole("button", { name: "New list" }).click();
    const dialog = page.getByRole("dialog", { name: "New list" });
    await dialog.getByRole("textbox", { name: "Name" }).fill("Weekly");
    await dialog.getByRole("button", { name: "Create list" }).click();
    await dialog.waitFor({ state: "detached" });
    const table = page.getByRole("region", { name: "Table of lists" });
    const weekly = table.getByRole("link", { name: "Weekly", exact: true });
    await weekly.waitFor();
    weeklyId = new URL((await weekly.getAttribute("href")) ?? "", ui.origin).searchParams.get("listId") ?? "";
    expect(weeklyId).toMatch(/^[0-9a-f-]{36}$/);

    // The same name in another case is taken: the server's refusal lands on the field.
    owner.expectFailedCalls({ rpc: "CreateContactList", status: 400 });
    await page.getByRole("button", { name: "New list" }).click();
    await dialog.getByRole("textbox", { name: "Name" }).fill("weekly");
    await dialog.getByRole("button", { name: "Create list" }).click();
    await dialog.getByText("Is taken: the company has a list of that name.").waitFor();
    expect(await dialog.getByRole("textbox", { name: "Name" }).getAttribute("aria-invalid")).toBe("true");
    await dialog.getByRole("textbox", { name: "Name" }).fill("Old offers");
    await dialog.getByRole("button", { name: "Create list" }).click();
    await table.getByRole("link", { name: "Old offers", exact: true }).waitFor();

    // The address as first written: a write keeps the spelling it is given.
    await upsert({ email: "Ada@contacts.example", listIds: [weeklyId] });
    await upsert({ email: "grace@contacts.example", listIds: [weeklyId] });
    await page.reload();
    await table.getByRole("link", { name: "2 contacts in Weekly" }).waitFor();
    await ui.checkPage(owner, "lists");
    await ui.checkPhone(owner, "lists", [{ region: "Table of lists", columns: ["Name", "Contacts"], actions: [/^Rename/, /^Delete/] }]);

    await page.getByRole("button", { name: "Rename Weekly" }).click();
    const rename = page.getByRole("dialog", { name: "Rename Weekly" });
    expect(await rename.getByRole("textbox", { name: "New name" }).inputValue()).toBe("Weekly");
    await rename.getByRole("textbox", { name: "New name" }).fill("Weekly news");
    await rename.getByRole("button", { name: "Rename list" }).click();
    await table.getByRole("link", { name: "Weekly news", exact: true }).waitFor();

    await page.getByRole("button", { name: "Delete Old offers" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Delete the list Old offers?" });
    await confirm.getByText("Its 0 contacts leave the list").waitFor();
    await confirm.getByRole("button", { name: "Delete list" }).click();
    await table.getByRole("link", { name: "Old offers", exact: true }).waitFor({ state: "detached" });
    await confirm.waitFor({ state: "detached" });
    expect(await table.getByRole("link").allTextContents()).toEqual(["Weekly news", "2"]);
  });

  it("creates a form with its own fields in the browser; a refused field name shows on that field", async () => {
    const { page } = owner;
    await open(owner, "/forms", "Sign-up forms");
    await page.getByText("No active form.").waitFor();
    await page.getByRole("button", { name: "New form" }).click();
    const dialog = page.getByRole("dialog", { name: "New sign-up form" });
    await dialog.getByRole("textbox", { name: "Name", exact: true }).fill("Newsletter");
    await dialog.getByRole("textbox", { name: "Language" }).fill("de");
    await dialog.getByRole("textbox", { name: "Consent text" }).fill("Ja, schickt mir den Newsletter.");
    await dialog.getByRole("checkbox", { name: "Double opt-in" }).click();
    expect(await dialog.getByRole("checkbox", { name: "Double opt-in" }).getAttribute("aria-checked")).toBe("false");
    await dialog.getByRole("group", { name: "Field 1: the email address" }).getByRole("textbox", { name: "Label" }).fill("E-Mail");

    await dialog.getByRole("button", { name: "Add field" }).click();
    const second = dialog.getByRole("group", { name: "Field 2" });
    await second.getByRole("textbox", { name: "Name" }).fill("firstName");
    await second.getByRole("textbox", { name: "Label" }).fill("Vorname");
    await dialog.getByRole("button", { name: "Add field" }).click();
    const third = dialog.getByRole("group", { name: "Field 3" });
    // Checked in the browser before sending: a name must start with a letter; a select needs choices.
    await third.getByRole("textbox", { name: "Name" }).fill("1topic");
    await third.getByRole("textbox", { name: "Label" }).fill("Thema");
    await third.getByRole("combobox", { name: "Type" }).selectOption("select");
    await dialog.getByRole("button", { name: "Create form" }).click();
    await third.getByText("Start with a letter; use letters, digits and _ only.").waitFor();
    await third.getByText("A select needs at least one choice.").waitFor();
    expect(owner.calls().filter((call) => call.startsWith("SignupFormsService/CreateForm"))).toEqual([]);

    // A name the server refuses (one every JavaScript object has): its 400 names fields[2].name, shown on that field.
    owner.expectFailedCalls({ rpc: "CreateForm", status: 400 });
    await third.getByRole("textbox", { name: "Name" }).fill("constructor");
    await third.getByRole("textbox", { name: "Choices, one per line" }).fill("News\nAngebote");
    await third.getByRole("checkbox", { name: "Required" }).click();
    await dialog.getByRole("button", { name: "Create form" }).click();
    await third.getByText(/is a reserved name/).waitFor();
    expect(await third.getByRole("textbox", { name: "Name" }).getAttribute("aria-invalid")).toBe("true");
    await ui.checkPage(owner, "form-refused");

    await third.getByRole("textbox", { name: "Name" }).fill("topic");
    await dialog.getByRole("button", { name: "Create form" }).click();
    const created = page.getByRole("dialog", { name: "Form created" });
    shownUrl = await created.getByRole("textbox", { name: "Hosted page address" }).inputValue();
    // PUBLIC_BASE_URL's address; this test's service listens on a port of its own, at the same path.
    const path = new URL(shownUrl).pathname;
    expect(path).toMatch(/^\/mail\/v1\/forms\/[A-Za-z0-9_-]{16}$/);
    formUrl = `${ui.origin}${path}`;
    publicId = path.split("/").pop() ?? "";
    await created.getByRole("button", { name: "Copy hosted page address" }).click();
    await created.getByText("Copied to the clipboard.").waitFor();
    expect(await clipboard(owner)).toBe(shownUrl);

    // The hosted page is the design just made.
    const hosted = await (await ui.h.fetch(new URL(formUrl).pathname)).text();
    expect(hosted).toContain('lang="de"');
    for (const text of ["E-Mail", "Vorname", "Thema", "Angebote", "Ja, schickt mir den Newsletter."]) expect(hosted).toContain(text);

    await created.getByRole("link", { name: "Open the form and its HTML snippet" }).click();
    await page.getByRole("heading", { level: 1, name: "Newsletter" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/admin/forms/${publicId}`);
  });

  it("shows the form's hosted page address and an HTML snippet to copy; the snippet's button opens the hosted page", async () => {
    const { page } = owner;
    await open(owner, `/forms/${publicId}`, "Newsletter");
    const snippet = (await page.getByRole("region", { name: "HTML snippet" }).textContent()) ?? "";
    expect(snippet).toBe(`<form action="${shownUrl}" method="get">\n  <button type="submit">Sign up</button>\n</form>`);
    await page.getByRole("button", { name: "Copy HTML snippet" }).click();
    await page.getByText("Copied to the clipboard.").first().waitFor();
    expect(await clipboard(owner)).toBe(snippet);
    expect(await page.getByRole("region", { name: "Fields of the form" }).locator("tbody tr").allTextContents()).toEqual([
      expect.stringContaining("E-Mail"),
      expect.stringContaining("Vorname"),
      expect.stringContaining("News, Angebote"),
    ]);
    await ui.checkPage(owner, "form");
    await ui.checkPhone(owner, "form", [{ region: "Fields of the form", columns: ["Name", "Type", "Required"] }]);

    // The snippet on a customer's page (another origin): its button lands on the hosted form.
    const site = await ui.openPage();
    await site.page.setContent(`<!doctype html><html lang="en"><title>Shop</title><main>${snippet.replace(shownUrl, formUrl)}</main></html>`);
    await site.page.getByRole("button", { name: "Sign up" }).click();
    await site.page.getByRole("heading", { level: 1, name: "Newsletter" }).waitFor();
    expect(new URL(site.page.url()).pathname).toBe(new URL(formUrl).pathname);
    expect(await site.page.getByRole("textbox", { name: "Vorname" }).isVisible()).toBe(true);
    await site.close();
  });

  it("counts the sign-ups of the last 30 days in the forms list", async () => {
    const { page } = owner;
    await signUp("lin@visitors.example", { firstName: "Lin", topic: "News" });
    await signUp("max@visitors.example", { topic: "Angebote" });
    await open(owner, "/forms", "Sign-up forms");
    const row = page.getByRole("region", { name: "Table of forms" }).locator("tbody tr", { hasText: "Newsletter" });
    await expect.poll(async () => row.locator('[data-label="Sign-ups, 30 days"]').textContent()).toBe("2");
    await ui.checkPage(owner, "forms");
    await ui.checkPhone(owner, "forms", [{ region: "Table of forms", columns: ["Name", "Sign-ups, 30 days"], actions: [/^Deactivate/] }]);
  });

  it("shows the contacts with their filters in the URL, and a contact's page with a message sent to it and a recorded conversion", async () => {
    const { page } = owner;
    await open(owner, "/contacts", "Contacts");
    const table = page.getByRole("region", { name: "Table of contacts" });
    await table.getByRole("link", { name: "Ada@contacts.example" }).waitFor();
    expect(await table.getByRole("link").count()).toBe(4);

    await page.getByRole("combobox", { name: "List" }).selectOption({ label: "Weekly news" });
    await page.getByRole("combobox", { name: "Status" }).selectOption("subscribed");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("listId") === weeklyId && url.searchParams.get("status") === "subscribed");
    await expect.poll(() => table.getByRole("link").allTextContents()).toEqual(["Ada@contacts.example"]);
    await page.getByRole("searchbox", { name: "Email or name" }).fill("lovelace");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("q") === "lovelace");
    // A filtered view is a link: opened afresh it shows the same.
    await page.goto(page.url());
    await table.getByRole("link", { name: "Ada@contacts.example" }).waitFor();
    expect(await page.getByRole("combobox", { name: "List" }).inputValue()).toBe(weeklyId);
    await ui.checkPage(owner, "contacts");
    await ui.checkPhone(owner, "contacts", [{ region: "Table of contacts", columns: ["Email", "Status", "Lists"] }]);

    await table.getByRole("link", { name: "Ada@contacts.example" }).click();
    await page.getByRole("heading", { level: 1, name: "Ada@contacts.example" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/admin/contacts/${adaId}`);
    const main = page.getByRole("main");
    for (const text of ["Ada Lovelace", "Analytical Engines", "subscribed", "checkout", "order 1001", "plan", "pro"]) {
      await main.getByText(text, { exact: true }).first().waitFor();
    }
    await page.getByRole("region", { name: "Lists" }).getByRole("link", { name: "Weekly news" }).waitFor();
    const messages = page.getByRole("region", { name: "Messages to this contact" });
    await messages.getByRole("link", { name: "Your receipt for order 1001" }).waitFor();
    const conversions = page.getByRole("region", { name: "Conversions of this contact" });
    const conversion = conversions.locator("tbody tr").first();
    await conversion.getByText("order-1001").waitFor();
    expect(await conversion.textContent()).toContain("49.95");
    expect(await conversion.textContent()).toContain("completed");
    await ui.checkPage(owner, "contact");
    await ui.checkPhone(owner, "contact", [
      { region: "Messages to this contact", columns: ["Subject", "Status"] },
      { region: "Conversions of this contact", columns: ["Event id", "Net revenue", "Status"] },
    ]);

    await messages.getByRole("link", { name: "Your receipt for order 1001" }).click();
    await page.getByRole("heading", { level: 1, name: "Your receipt for order 1001" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/admin/messages/${messageId}`);
  });

  it("shows what the form recorded with a sign-up's consent", async () => {
    const { page } = owner;
    await open(owner, "/contacts?q=lin%40visitors", "Contacts");
    await page.getByRole("region", { name: "Table of contacts" }).getByRole("link", { name: "lin@visitors.example" }).click();
    await page.getByRole("heading", { level: 1, name: "lin@visitors.example" }).waitFor();
    await page.getByRole("region", { name: "Consent" }).getByText(`form:${publicId}`).waitFor();
    const recorded = page.getByRole("region", { name: "What the form recorded" });
    await recorded.getByRole("link", { name: "Newsletter" }).waitFor();
    for (const text of ["Ja, schickt mir den Newsletter.", "not asked", "1"]) await recorded.getByText(text, { exact: true }).first().waitFor();
    expect(await recorded.textContent()).toMatch(/127\.0\.0\.1/);
    // The form's other field became an attribute; firstName filled the contact's name.
    await page.getByRole("main").getByText("Lin", { exact: true }).waitFor();
    await page.getByRole("region", { name: "Attributes" }).getByText("topic").waitFor();
    await ui.checkPage(owner, "contact-signup");
  });

  it("answers another company's contact with 'not found' and deactivates the form after confirming", async () => {
    const { page } = owner;
    const other = await ui.h.newCompanyWithKey(["mail.contacts.write"], "Other Co.");
    const foreign = await ui.h.fetch("/mail/v1/contacts", {
      method: "POST",
      ...bearer(other.secret, { "content-type": "application/json" }),
      body: JSON.stringify({ email: "ada@contacts.example" }),
    });
    const foreignId = ((await foreign.json()) as { id: string }).id;
    owner.expectFailedCalls({ rpc: "GetContact", status: 404 });
    await open(owner, `/contacts/${foreignId}`, "Contact not found");

    await open(owner, "/forms", "Sign-up forms");
    await page.getByRole("button", { name: "Deactivate Newsletter" }).click();
    await page.getByRole("alertdialog", { name: "Deactivate the form Newsletter?" }).getByRole("button", { name: "Deactivate form" }).click();
    await page.getByText("No active form.").waitFor();
    expect((await ui.h.fetch(new URL(formUrl).pathname)).status).toBe(404);
  });

  it("lets a member read contacts and forms without any change control; lists are for administrators", async () => {
    const member = await ui.signIn(shop.companyId, { email: "mia@contacts.example", displayName: "Mia Member", role: MemberRole.MEMBER });
    const { page } = member;
    await open(member, `/contacts/${adaId}`, "Ada@contacts.example");
    // No list names for a member (listing lists is Mail administration): the list by its id, linked to its contacts.
    await page.getByRole("region", { name: "Lists" }).getByRole("link", { name: weeklyId }).waitFor();
    await page.getByRole("region", { name: "Conversions of this contact" }).getByText("order-1001").waitFor();
    expect(member.calls().filter((call) => call.startsWith("ListsService/"))).toEqual([]);
    await ui.checkPage(member, "contact-member");

    await open(member, "/contacts", "Contacts");
    await page.getByRole("textbox", { name: "List id" }).waitFor();
    await open(member, "/forms", "Sign-up forms");
    await page.getByText("No active form.").waitFor();
    expect(await page.getByRole("button", { name: "New form" }).count()).toBe(0);
    await open(member, "/lists", "Not available");
    ui.assertClean(member);
    await member.close();
  });
});
