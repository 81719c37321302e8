import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { bearer } from "../support/api-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import type { SendingHarness } from "../support/sending-harness.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";
import { PRIVATE_HOST, type RoutedReceiver, startRoutedReceiver, verifiedBody, verifies, waitUntil, loopbackDelivery } from "../webhooks/api-support.ts";

/**
 * The Webhooks and Deliveries tabs, walked as an owner would in headless
 * Chromium against the real service (PostgreSQL, a Temporal dev server
 * and worker, a real HTTPS receiver on 127.0.0.1): a refused URL shows the
 * server's message in the form; an endpoint is created and its secret shown
 * once; a delivery to a failing receiver reaches dead letter, is found by
 * the list's filters (which live in the URL), and is retried from its own
 * page once the receiver recovers; a test event is sent; every dead letter
 * since a time is retried after confirming a count; the secret is rotated;
 * the endpoint is disabled and deleted. Only the schedule is shortened
 * (1 second between attempts) and loopback allowed, by the test overrides.
 */
const chromiumInstalled = await chromiumAvailable("the webhooks screen test");

// Each step checks pages with axe and takes screenshots (4 per page): slower than the suite default on a busy machine.
describe.skipIf(!chromiumInstalled)("the Webhooks and Deliveries tabs", { timeout: 180_000 }, () => {
  let ui: AdminScreen;
  let h: SendingHarness;
  let hooks: RoutedReceiver;
  let screen: ScreenPage;
  let contactsKey: string;
  let otherEndpointId: string;
  let otherDeliveryId: string;
  let endpointId = "";
  let secret = "";
  const PATH = "/screen/hook";

  beforeAll(async () => {
    hooks = await startRoutedReceiver();
    ui = await startAdminScreen({}, { webhookDelivery: loopbackDelivery(hooks.certificate) });
    h = ui.h;
    const { company } = await h.admin.createCompany({ name: "Hooks Screen Inc.", entitlements: { api: true, smtp: false } });
    const companyId = company?.id ?? "";
    contactsKey = (await h.newKey(companyId, ["mail.contacts.write"])).secret;

    // Another company with an endpoint and a delivery: its ids must answer "not found" through the screen.
    const other = await h.newCompanyWithKey(["mail.contacts.write", "mail.admin"], "Other Co.");
    const response = await h.fetch("/mail/v1/webhooks", {
      method: "POST",
      headers: { ...(bearer(other.secret).headers as Record<string, string>), "content-type": "application/json" },
      body: JSON.stringify({ url: hooks.urlFor("/other"), events: ["contact.updated"] }),
    });
    expect(response.status).toBe(201);
    const created = (await response.json()) as { endpoint: { id: string }; secret: string };
    otherEndpointId = created.endpoint.id;
    await addContact(other.secret, "someone@other.example");
    const [first] = await hooks.waitOn("/other", 1);
    if (!first) throw new Error("no delivery to the other company's endpoint");
    otherDeliveryId = verifiedBody(first, created.secret).id;

    screen = await ui.signIn(companyId, { email: "olive@hooks.example", displayName: "Olive Owner", role: MemberRole.OWNER });
  });
  afterAll(async () => {
    // Closed whatever the page showed: a failed check must not leave the service and its servers running.
    try {
      if (screen) ui.assertClean(screen);
    } finally {
      await ui?.close();
      await hooks?.close();
    }
  });

  async function addContact(key: string, email: string): Promise<void> {
    const response = await h.fetch("/mail/v1/contacts", {
      method: "POST",
      headers: { ...(bearer(key).headers as Record<string, string>), "content-type": "application/json" },
      body: JSON.stringify({ email }),
    });
    expect(response.status).toBe(200);
  }

  /** Requests of PATH about `email` (the contact.updated events), verified with `key`. */
  function receivedFor(email: string, key = secret) {
    return hooks.on(PATH).filter((r) => (JSON.parse(r.body) as { data: { email?: string } }).data.email === email && verifies(r, key));
  }

  it("shows the server's refusal of a private URL in the form, then creates the endpoint and shows its secret once", async () => {
    const page = screen.page;
    await openPath(screen, "/webhooks");
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();
    await ui.checkPage(screen, "webhooks");

    await page.getByRole("button", { name: "New endpoint" }).click();
    const dialog = page.getByRole("dialog", { name: "New webhook endpoint" });
    await dialog.getByRole("textbox", { name: "URL" }).fill(`https://${PRIVATE_HOST}/hooks`);
    // The picker groups the events by kind.
    const contacts = dialog.getByRole("group", { name: "Contacts" });
    await contacts.getByRole("checkbox", { name: "contact.updated" }).click();
    screen.expectFailedCalls({ rpc: "CreateWebhookEndpoint", status: 400 });
    await dialog.getByRole("button", { name: "Create endpoint" }).click();
    const refusal = dialog.getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe("The endpoint host is not allowed. Use a public https:// address.");
    expect(await dialog.getByRole("textbox", { name: "URL" }).getAttribute("aria-invalid")).toBe("true");
    await ui.checkPage(screen, "webhooks-refused");

    await dialog.getByRole("textbox", { name: "URL" }).fill(hooks.urlFor(PATH));
    await dialog.getByRole("textbox", { name: "Description (optional)" }).fill("CRM sync");
    await dialog.getByRole("button", { name: "Create endpoint" }).click();
    const created = page.getByRole("dialog", { name: "Endpoint created" });
    secret = await created.getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await created.getByText("It will not be shown again").count()).toBe(1);
    await created.getByRole("link", { name: "Open the endpoint" }).click();
    await page.getByRole("heading", { level: 1, name: hooks.urlFor(PATH) }).waitFor();
    endpointId = new URL(page.url()).pathname.split("/").pop() ?? "";
    expect(await page.content()).not.toContain(secret);
    await ui.checkPage(screen, "webhooks-endpoint");
  });

  it("shows a delivery to a failing receiver reach dead letter, without a retry control in the list", async () => {
    const page = screen.page;
    hooks.answer(PATH, { status: 503, body: "RECEIVER-BODY-NEVER-SHOWN" });
    await addContact(contactsKey, "ada@crm.example");
    await waitUntil(async () => (receivedFor("ada@crm.example").length >= 5 ? true : undefined), "five failed attempts");

    await openPath(screen, "/deliveries");
    await page.getByRole("heading", { level: 1, name: "Deliveries" }).waitFor();
    // Filter by state through the form: the filter lands in the URL.
    await page.getByRole("combobox", { name: "State" }).selectOption({ label: "dead letter" });
    await page.getByRole("combobox", { name: "Endpoint" }).selectOption({ label: hooks.urlFor(PATH) });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("state") === "dead_letter" && url.searchParams.get("endpoint") === endpointId);
    const row = page.locator("tr[data-delivery-id]");
    await waitUntil(async () => {
      await page.reload();
      await page.getByRole("heading", { level: 1, name: "Deliveries" }).waitFor();
      return (await row.count()) === 1 ? true : undefined;
    }, "the dead letter in the filtered list");
    expect(await row.textContent()).toContain("dead letter");
    expect(await row.textContent()).toContain("HTTP 503");
    // The spec: the deliveries list has no retry control.
    expect(await page.getByRole("button", { name: /retry/i }).count()).toBe(0);
    await ui.checkPage(screen, "deliveries");
    await ui.checkPhone(screen, "deliveries-list", [{ region: "Table of deliveries", columns: ["Event", "State", "Last attempt"] }]);

    // A filtered view is a link: opened afresh it shows the same.
    const filtered = page.url();
    await page.goto(filtered);
    await row.first().waitFor();
    expect(await page.getByRole("combobox", { name: "State" }).inputValue()).toBe("dead_letter");
    expect(await page.getByRole("combobox", { name: "Endpoint" }).inputValue()).toBe(endpointId);
  });

  it("retries the dead letter from its page after the receiver recovers, and it is delivered", async () => {
    const page = screen.page;
    await page.locator("tr[data-delivery-id] a").first().click();
    await page.getByRole("heading", { level: 1, name: /Delivery of/ }).waitFor();
    const attempts = page.getByRole("region", { name: "Attempts" }).locator("tbody tr");
    expect(await attempts.count()).toBe(5);
    for (const text of await attempts.allTextContents()) expect(text).toContain("HTTP 503");
    // The body as sent; never the receiver's answer.
    expect(await page.getByRole("region", { name: "Delivery body as sent" }).textContent()).toContain("ada@crm.example");
    expect(await page.content()).not.toContain("RECEIVER-BODY-NEVER-SHOWN");
    await ui.checkPage(screen, "delivery-dead-letter");
    await ui.checkPhone(screen, "delivery", [{ region: "Attempts", columns: ["Attempt", "Time", "Result"] }]);

    hooks.answer(PATH, { status: 200 });
    await page.getByRole("button", { name: "Retry delivery" }).click();
    await page.getByText("Retry started").waitFor();
    // The page follows the attempts while they are under way.
    await page.locator(".badge", { hasText: "succeeded" }).waitFor({ timeout: 30_000 });
    expect(await attempts.count()).toBe(6);
    expect(await attempts.last().textContent()).toContain("HTTP 200");
    const received = receivedFor("ada@crm.example");
    expect(received.map((r) => r.headers["service-attempt"])).toEqual(["1", "2", "3", "4", "5", "6"]);
  });

  it("sends a signed test event and shows the attempt's result", async () => {
    const page = screen.page;
    await openPath(screen, `/webhooks/${endpointId}`);
    await page.getByRole("combobox", { name: "Event" }).selectOption("delivered");
    const before = hooks.on(PATH).length;
    await page.getByRole("button", { name: "Send test event" }).click();
    const result = page.getByTestId("test-event-result");
    await result.waitFor();
    expect(await result.textContent()).toMatch(/^Delivered: HTTP 200 in/);
    const [test, ...more] = hooks.on(PATH).slice(before);
    expect(more).toHaveLength(0);
    if (!test) throw new Error("the test event did not arrive");
    const body = verifiedBody(test, secret);
    expect(body).toMatchObject({ event: "delivered", data: { test: true } });
  });

  it("retries every dead letter of the endpoint since a time, after confirming their count", async () => {
    const page = screen.page;
    hooks.answer(PATH, { status: 500 });
    await addContact(contactsKey, "bob@crm.example");
    await addContact(contactsKey, "cy@crm.example");
    await waitUntil(
      async () => (receivedFor("bob@crm.example").length >= 5 && receivedFor("cy@crm.example").length >= 5 ? true : undefined),
      "two dead letters",
    );
    hooks.answer(PATH, { status: 200 });

    await openPath(screen, `/webhooks/${endpointId}`);
    const panel = page.getByRole("region", { name: "Retry dead letters" });
    await waitUntil(async () => {
      await panel.getByRole("button", { name: "Count dead letters" }).click();
      const counted = panel.getByText(/dead letters? since/);
      await counted.waitFor();
      return (await counted.textContent())?.startsWith("2 dead letters") ? true : undefined;
    }, "a count of 2");
    await panel.getByRole("button", { name: "Retry 2" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Retry 2 dead letters?" });
    await ui.checkPage(screen, "webhooks-retry-confirm");
    await confirm.getByRole("button", { name: "Retry", exact: true }).click();
    await panel.getByText("2 put back into attempting.").waitFor();
    await waitUntil(
      async () => (receivedFor("bob@crm.example").length >= 6 && receivedFor("cy@crm.example").length >= 6 ? true : undefined),
      "both retried deliveries",
    );
  });

  it("shows each endpoint's health over the last 24 hours in the list", async () => {
    const page = screen.page;
    // ada, bob and cy: each failed 5 times, then succeeded on a retry; the test event is not a delivery.
    await waitUntil(async () => {
      await openPath(screen, "/webhooks");
      const row = page.locator("tr", { hasText: hooks.urlFor(PATH) });
      return (await row.textContent())?.includes("3 deliveries, 100% succeeded") ? true : undefined;
    }, "the endpoint's health");
    await ui.checkPhone(screen, "webhooks-list", [{ region: "Table of endpoints", columns: ["URL", "Enabled", "Last 24 h"] }]);
  });

  it("rotates the secret, saying until when the previous one signs; disables and deletes the endpoint after confirming", async () => {
    const page = screen.page;
    await openPath(screen, `/webhooks/${endpointId}`);
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("alertdialog", { name: "Rotate the signing secret?" }).getByRole("button", { name: "Rotate" }).click();
    const newSecret = await page.getByRole("textbox", { name: "New signing secret" }).inputValue();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    const until = page.getByText("The previous secret keeps signing until").locator("time");
    const ends = new Date((await until.getAttribute("datetime")) ?? "");
    expect(Math.abs(ends.getTime() - (Date.now() + 24 * 3_600_000))).toBeLessThan(120_000);

    // Both secrets sign the next delivery.
    await addContact(contactsKey, "dee@crm.example");
    const next = await waitUntil(async () => hooks.on(PATH).find((r) => r.body.includes("dee@crm.example")), "a delivery after the rotation");
    expect(verifies(next, secret) && verifies(next, newSecret)).toBe(true);

    const toggle = page.getByRole("switch", { name: "Enabled" });
    expect(await toggle.getAttribute("aria-checked")).toBe("true");
    await toggle.press("Space");
    await waitUntil(async () => ((await toggle.getAttribute("aria-checked")) === "false" ? true : undefined), "the switch off");
    // Saved: opened afresh, the endpoint is disabled.
    await openPath(screen, `/webhooks/${endpointId}`);
    expect(await page.getByRole("switch", { name: "Enabled" }).getAttribute("aria-checked")).toBe("false");

    await page.getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByRole("alertdialog", { name: "Delete this endpoint?" }).getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();
    await page.getByText("No endpoint yet").waitFor();
  });

  it("answers not found for another company's endpoint and delivery ids", async () => {
    const page = screen.page;
    screen.expectFailedCalls({ rpc: "GetWebhookEndpoint", status: 404 }, { rpc: "GetWebhookDelivery", status: 404 });
    await openPath(screen, `/webhooks/${otherEndpointId}`);
    expect(await page.getByRole("alert").textContent()).toBe("No endpoint with this id in your company.");
    await openPath(screen, `/deliveries/${otherDeliveryId}`);
    expect(await page.getByRole("alert").textContent()).toBe("No delivery with this id in your company.");
    await ui.checkPage(screen, "deliveries-not-found");
  });
});

/** Opens a page of the screen and waits for its heading. */
async function openPath(screen: ScreenPage, path: string): Promise<void> {
  await screen.goto(path);
  await screen.page.locator("main h1").first().waitFor();
}

