import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole } from "../../src/gen/mail/v1/members_pb.js";
import { bearer } from "../support/api-harness.ts";
import { chromiumAvailable } from "../support/chromium.ts";
import { type AdminScreen, type ScreenPage, startAdminScreen } from "../support/admin-browser.ts";

/**
 * The API keys tab, walked as an owner would in headless Chromium against
 * the real service: create a key with ticked scopes, copy its secret (shown
 * once), use it; rotate it with a grace period and see until when the old
 * one works; revoke it after confirming, and see 401 on its next call.
 */
const chromiumInstalled = await chromiumAvailable("the API keys screen test");

// Each step checks pages with axe and takes screenshots (4 per page): slower than the suite default on a busy machine.
describe.skipIf(!chromiumInstalled)("the API keys tab", { timeout: 180_000 }, () => {
  let ui: AdminScreen;
  let screen: ScreenPage;

  beforeAll(async () => {
    ui = await startAdminScreen();
    const { company } = await ui.h.admin.createCompany({ name: "Keys Screen Inc.", entitlements: { api: true, smtp: false } });
    screen = await ui.signIn(company?.id ?? "", { email: "olive@keys.example", displayName: "Olive Owner", role: MemberRole.OWNER });
  });
  afterAll(async () => {
    // Closed whatever the page showed: a failed check must not leave the service and its servers running.
    try {
      if (screen) ui.assertClean(screen);
    } finally {
      await ui?.close();
    }
  });

  async function me(secret: string): Promise<{ status: number; code?: string }> {
    const response = await ui.h.fetch("/mail/v1/me", bearer(secret));
    const body = (await response.json()) as { error?: { code: string } };
    return { status: response.status, ...(body.error ? { code: body.error.code } : {}) };
  }

  it("creates a key with the ticked scopes and shows its secret once; the secret works", async () => {
    const page = screen.page;
    await openPath(screen, "/keys");
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();

    await page.getByRole("button", { name: "New key" }).click();
    const dialog = page.getByRole("dialog", { name: "New API key" });
    await dialog.getByLabel("Name").fill("Reporting server");
    // Only scopes the member holds are offered; sending is for keys made by operators.
    expect(await dialog.getByRole("checkbox", { name: "mail.transactional.send" }).count()).toBe(0);
    await dialog.getByRole("checkbox", { name: "mail.events.read" }).click();
    await dialog.getByRole("button", { name: "Create key" }).click();

    const created = page.getByRole("dialog", { name: "Key created" });
    await created.getByText("It will not be shown again").waitFor();
    const secret = await created.getByRole("textbox", { name: "API key", exact: true }).inputValue();
    expect(secret).toMatch(/^[a-z]{3}_/);
    await ui.checkPage(screen, "keys-secret-once");
    expect(await me(secret)).toEqual({ status: 200 });

    await created.getByRole("button", { name: "Done" }).click();
    const row = page.getByRole("row", { name: /Reporting server/ });
    await row.waitFor();
    expect(await row.textContent()).toContain("mail.events.read");
    expect(await row.textContent()).toContain("olive@keys.example");
    // The table never shows the secret again.
    expect(await page.content()).not.toContain(secret);
    await ui.checkPage(screen, "keys");
  });

  it("checks the contract's rules before sending, and shows the server's refusal on the field it names", async () => {
    const page = screen.page;
    await page.getByRole("button", { name: "New key" }).click();
    const dialog = page.getByRole("dialog", { name: "New API key" });
    const name = dialog.getByRole("textbox", { name: "Name" });
    // The name's limit is the contract's (`(buf.validate.field).string.max_len` of CreateApiKeyRequest.name).
    expect(await name.getAttribute("maxlength")).toBe("200");

    // Required by the contract: said on each field, and nothing is sent.
    const before = screen.calls().length;
    await dialog.getByRole("button", { name: "Create key" }).click();
    await dialog.getByText("Fill this in.").waitFor();
    expect(await name.getAttribute("aria-invalid")).toBe("true");
    expect(await dialog.getByRole("group", { name: "Scopes" }).getByText("Tick at least one scope.").isVisible()).toBe(true);
    expect(screen.calls().slice(before).filter((call) => call.startsWith("ApiKeysService/"))).toEqual([]);

    // The server's own rule (an expiry in the future): its VALIDATION_ERROR lands on the Expires field.
    await name.fill("Too late");
    await dialog.getByRole("checkbox", { name: "mail.events.read" }).click();
    const expires = dialog.getByLabel("Expires (optional, your local time)");
    await expires.fill("2020-01-01T10:00");
    screen.expectFailedCalls({ rpc: "CreateApiKey", status: 400 });
    await dialog.getByRole("button", { name: "Create key" }).click();
    await dialog.getByRole("alert").filter({ hasText: "Must be in the future." }).waitFor();
    expect(await expires.getAttribute("aria-invalid")).toBe("true");
    expect(await name.getAttribute("aria-invalid")).toBeNull();
    await ui.checkPage(screen, "keys-refused");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
  });

  it("rotates a key with grace: says until when the old one works, and both work meanwhile", async () => {
    const page = screen.page;
    const { secret: oldSecret } = await createKeyThroughScreen(screen, "Nightly export");

    await page.getByRole("button", { name: /^Rotate Nightly export/ }).click();
    const dialog = page.getByRole("dialog", { name: /Rotate the key/ });
    await dialog.getByLabel("The old key keeps working for").selectOption({ label: "1 hour" });
    await dialog.getByRole("button", { name: "Rotate key" }).click();
    const rotated = page.getByRole("dialog", { name: "Key rotated" });
    const until = rotated.locator("time").first();
    await until.waitFor();
    const stops = new Date((await until.getAttribute("datetime")) ?? "");
    expect(Math.abs(stops.getTime() - (Date.now() + 3_600_000))).toBeLessThan(120_000);
    expect(await until.getAttribute("title")).toMatch(/UTC$/);
    const newSecret = await rotated.getByRole("textbox", { name: "New API key" }).inputValue();
    await rotated.getByRole("button", { name: "Done" }).click();

    expect(await me(newSecret)).toEqual({ status: 200 });
    expect(await me(oldSecret)).toEqual({ status: 200 });
  });

  it("is usable with the keyboard alone: open, fill, tick, create, close", async () => {
    const page = screen.page;
    await page.getByRole("button", { name: "New key" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "New API key" });
    // Focus moves into the dialog, on its first field.
    await page.keyboard.type("Typed with keys");
    expect(await dialog.getByRole("textbox", { name: "Name" }).inputValue()).toBe("Typed with keys");
    await dialog.getByRole("checkbox", { name: "mail.events.read" }).focus();
    await page.keyboard.press("Space");
    expect(await dialog.getByRole("checkbox", { name: "mail.events.read" }).getAttribute("aria-checked")).toBe("true");
    await dialog.getByRole("button", { name: "Create key" }).focus();
    await page.keyboard.press("Enter");
    const created = page.getByRole("dialog", { name: "Key created" });
    const secret = await created.getByRole("textbox", { name: "API key", exact: true }).inputValue();
    expect(await me(secret)).toEqual({ status: 200 });
    await page.keyboard.press("Escape");
    await created.waitFor({ state: "hidden" });
    await page.getByRole("row", { name: /Typed with keys/ }).waitFor();
  });

  it("revokes a key after confirming; its next call answers 401", async () => {
    const page = screen.page;
    const { secret } = await createKeyThroughScreen(screen, "Leaked laptop key");
    expect(await me(secret)).toEqual({ status: 200 });

    await page.getByRole("button", { name: /^Revoke Leaked laptop key/ }).click();
    const confirm = page.getByRole("alertdialog", { name: /Revoke the key/ });
    await ui.checkPage(screen, "keys-revoke-confirm");
    // Cancel changes nothing.
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect(await me(secret)).toEqual({ status: 200 });

    await page.getByRole("button", { name: /^Revoke Leaked laptop key/ }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Revoke key" }).click();
    await page.getByRole("row", { name: /Leaked laptop key/ }).getByText("revoked").waitFor();
    expect(await me(secret)).toEqual({ status: 401, code: "API_KEY_INVALID" });
  });
});

async function createKeyThroughScreen(screen: ScreenPage, name: string): Promise<{ secret: string }> {
  const page = screen.page;
  await page.getByRole("button", { name: "New key" }).click();
  const dialog = page.getByRole("dialog", { name: "New API key" });
  await dialog.getByLabel("Name").fill(name);
  await dialog.getByRole("checkbox", { name: "mail.events.read" }).click();
  await dialog.getByRole("button", { name: "Create key" }).click();
  const created = page.getByRole("dialog", { name: "Key created" });
  const secret = await created.getByRole("textbox", { name: "API key", exact: true }).inputValue();
  await created.getByRole("button", { name: "Done" }).click();
  await page.getByRole("row", { name: new RegExp(name) }).waitFor();
  return { secret };
}

/** Opens a page of the screen and waits for its heading. */
async function openPath(screen: ScreenPage, path: string): Promise<void> {
  await screen.goto(path);
  await screen.page.locator("main h1").first().waitFor();
}
