import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import { WebhookDeliveryState, WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type RoutedReceiver, startRoutedReceiver, waitUntil, loopbackDelivery } from "./api-support.ts";
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable } from "../support/chromium.ts";

/**
 * Operators find dead letters in the Temporal UI by search attribute and
 * retry them from there with the `retry` signal (docs/webhooks.md,
 * runbook): the dev server's own Web UI, driven in headless Chromium.
 * Skipped, saying why, only when no Chromium is installed
 * (`apt-get install -y chromium`; .ci/run installs it).
 */
const chromiumInstalled = await chromiumAvailable("the Temporal UI test");

describe.skipIf(!chromiumInstalled)("a dead-lettered delivery in the Temporal UI", () => {
  let h: SendingHarness;
  let hooks: RoutedReceiver;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    hooks = await startRoutedReceiver();
    h = await startSendingHarness({}, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await hooks?.close();
  });

  /** Publishes one event that the company's failing endpoint dead-letters; answers the delivery id. */
  async function deadLetterFor(companyId: string, path: string): Promise<string> {
    const operator: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
      return next(req);
    };
    const events = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
    const { endpoint } = await h.forCompany(WebhooksService, companyId).createWebhookEndpoint({ url: hooks.urlFor(path), events: ["opened"] });
    await events.publishEvent({
      companyId,
      eventId: `open-${path}`,
      event: "opened",
      occurredAt: timestampFromDate(new Date()),
      data: { case: "campaign", value: { campaignId: "cmp_1", recipientId: "rcp_1", contactId: "ct_1", email: "ada@example.com" } },
    });
    return waitUntil(async () => {
      const page = await h.forCompany(WebhooksService, companyId).listWebhookDeliveries({ endpointId: endpoint?.id ?? "", state: WebhookDeliveryState.DEAD_LETTER });
      return page.items[0]?.id;
    }, "a dead letter");
  }

  /** Opens the workflow list with `query`; true once `workflowId` is listed (the list loads after the page). */
  async function listed(query: string, workflowId: string): Promise<true | undefined> {
    await page.goto(`${h.temporal.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
    try {
      await page.getByRole("link", { name: workflowId }).first().waitFor({ state: "visible", timeout: 5_000 });
      return true;
    } catch {
      return undefined;
    }
  }

  it("finds it by query and retries it with the retry signal sent from the UI", async () => {
    hooks.answer("/ui/", { status: 500 });
    const mine = await h.newCompanyWithKey(["mail.admin"], "UI Co");
    const theirs = await h.newCompanyWithKey(["mail.admin"], "Other UI Co");
    const deliveryId = await deadLetterFor(mine.companyId, "/ui/mine");
    const otherDeliveryId = await deadLetterFor(theirs.companyId, "/ui/theirs");
    const workflowId = `webhook-delivery-${deliveryId}`;

    // The runbook's query: dead letters of one company.
    const query = `WebhookDeliveryStatus = "dead_letter" AND WebhookCompanyId = "${mine.companyId}"`;
    await waitUntil(() => listed(query, workflowId), "the dead letter in the UI's workflow list", 60_000);
    expect(await page.getByText(`webhook-delivery-${otherDeliveryId}`).count()).toBe(0);

    // Open it and send the `retry` signal from the UI.
    hooks.answer("/ui/", { status: 200 });
    await page.getByRole("link", { name: workflowId }).first().click();
    await page.waitForURL(new RegExp(`/workflows/${workflowId}/`));
    await page.getByRole("button", { name: "More Actions" }).click();
    await page.getByRole("menuitem", { name: /send a signal/i }).click();
    const dialog = page.getByRole("dialog", { name: "Send a Signal" });
    // The UI lists the signals the workflow defines (from its metadata): `retry`, no input.
    await dialog.getByTestId("signal-select-button").click();
    await dialog.getByRole("option", { name: "retry", exact: true }).click();
    await dialog.getByTestId("confirm-modal-button").click();
    await dialog.waitFor({ state: "hidden" });

    await waitUntil(async () => {
      const { delivery } = await h.forCompany(WebhooksService, mine.companyId).getWebhookDelivery({ id: deliveryId });
      return delivery?.state === WebhookDeliveryState.SUCCEEDED ? true : undefined;
    }, "the signalled retry to succeed");
    const { attempts } = await h.forCompany(WebhooksService, mine.companyId).getWebhookDelivery({ id: deliveryId });
    expect(attempts.map((a) => a.status)).toEqual([500, 500, 500, 500, 500, 200]);

    // And the UI shows it as succeeded now.
    await waitUntil(
      () => listed(`WebhookDeliveryStatus = "succeeded" AND WebhookCompanyId = "${mine.companyId}"`, workflowId),
      "the delivery as succeeded in the UI",
      60_000,
    );
  });
});
