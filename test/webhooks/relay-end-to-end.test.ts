import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from "@temporalio/worker";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { HttpsWebhookSender } from "../../src/adapters/http/webhook-sender.ts";
import { createWebhookDeliveryActivities } from "../../src/adapters/temporal/webhooks/activities.ts";
import { WebhookDeliveryDispatcher, webhookDeliveryWorkflowId } from "../../src/adapters/temporal/webhooks/dispatcher.ts";
import { listenForWebhookWork } from "../../src/adapters/postgres/webhooks/webhook-work-feed.ts";
import type { DeliveryRecord } from "../../src/capabilities/webhooks/index.ts";
import { findTemporalCli } from "../../src/runtime/temporal-dev-server.ts";
import { SEARCH_ATTRIBUTES, WEBHOOK_DELIVERY_STATUS } from "../../workflows/search-attributes.ts";
import { type HttpsReceiver, makeTestCertificate, startHttpsReceiver } from "../adapters/http/https-receiver.ts";
import { openWebhooksHarness, type WebhooksHarness } from "./harness.ts";

/**
 * The whole delivery path below the API, with real parts: an event in the
 * PostgreSQL outbox, the relay's fan-out and workflow start, the delivery
 * workflow on a Temporal dev server, its activity posting over HTTPS to a
 * receiver on 127.0.0.1, the outcome in PostgreSQL; then a dead letter and
 * its manual retry. Only the schedule is shortened.
 */
const WORKFLOWS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../workflows/webhooks/delivery.ts");
const HOOK_NAME = "hooks.e2e.example";

Runtime.install({ logger: new DefaultLogger("ERROR") });

let h: WebhooksHarness;
let receiver: HttpsReceiver;
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
let dispatcher: WebhookDeliveryDispatcher;
let company: string;
let taskQueue: string;

beforeAll(async () => {
  const cli = await findTemporalCli();
  if (!cli) throw new Error("Temporal CLI not found: set TEMPORAL_CLI_PATH");
  const certificate = await makeTestCertificate([HOOK_NAME]);
  receiver = await startHttpsReceiver(certificate);
  const sender: { current?: HttpsWebhookSender } = {};
  h = await openWebhooksHarness({
    allowLoopback: true,
    transport: { post: (webhook) => (sender.current as HttpsWebhookSender).post(webhook) },
  });
  sender.current = new HttpsWebhookSender({ policy: h.policy, timeoutMs: 2_000, trustedCa: certificate.cert });
  h.dns.set(HOOK_NAME, ["127.0.0.1"]);
  company = await h.newCompany();

  env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: "existing-path", path: cli }, ip: "127.0.0.1", searchAttributes: [...SEARCH_ATTRIBUTES] },
  });
  taskQueue = `webhooks-e2e-${randomUUID()}`;
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: new DefaultLogger("ERROR") }),
    activities: createWebhookDeliveryActivities({ attempts: h.webhooks.attempts }),
  });
  running = worker.run();
  dispatcher = new WebhookDeliveryDispatcher({
    client: env.client,
    taskQueue,
    outbox: h.outbox,
    schedule: { maxAttempts: 3, waitsSeconds: [1, 1], deadLetterWaitSeconds: 300 },
    log: { warn: (details, message) => console.warn(message, details) },
  });
});

afterAll(async () => {
  await dispatcher?.close();
  if (worker?.getState() === "RUNNING") worker.shutdown();
  await running;
  await env?.teardown();
  await h?.close();
  await receiver?.close();
});

beforeEach(() => {
  receiver.received.length = 0;
});

async function waitForDelivery(id: string, done: (d: DeliveryRecord) => boolean): Promise<DeliveryRecord> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { delivery } = await h.webhooks.deliveries.get({ companyId: company, deliveryId: id });
    if (done(delivery)) return delivery;
    if (Date.now() > deadline) throw new Error(`delivery ${id} stuck in ${delivery.state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("from the outbox to the receiver", () => {
  it("fans an event out, starts the delivery's workflow and delivers it once", async () => {
    receiver.handle((_request, response) => response.writeHead(204).end());
    const { endpoint } = await h.webhooks.endpoints.create({ companyId: company, url: `https://${HOOK_NAME}:${receiver.port}/in`, events: ["delivered"] });
    await h.recordEvent(company, "delivered", { messageId: "m-42" });

    expect(await dispatcher.relayOnce()).toEqual({ fannedOut: 1, started: 1, retried: 0 });
    const [listed] = (await h.webhooks.deliveries.list({ companyId: company, endpointId: endpoint.id })).items;
    if (!listed) throw new Error("no delivery");
    const done = await waitForDelivery(listed.id, (d) => d.state === "succeeded");
    expect(done).toMatchObject({ attemptCount: 1, lastStatus: 204 });
    await receiver.waitFor(1);
    expect(JSON.parse(receiver.received[0]?.body ?? "{}")).toMatchObject({ id: listed.id, event: "delivered", data: { messageId: "m-42" } });

    const handle = env.client.workflow.getHandle(webhookDeliveryWorkflowId(listed.id));
    expect(await handle.result()).toBe("succeeded");
    expect((await handle.describe()).typedSearchAttributes.get(WEBHOOK_DELIVERY_STATUS)).toBe("succeeded");
    // A later pass finds nothing left to do.
    expect(await dispatcher.relayOnce()).toEqual({ fannedOut: 0, started: 0, retried: 0 });
    expect(receiver.received).toHaveLength(1);
  });

  it("dead-letters after the last failed attempt, and a manual retry delivers it with the next attempt number", async () => {
    receiver.handle((_request, response) => response.writeHead(500).end());
    const { endpoint } = await h.webhooks.endpoints.create({ companyId: company, url: `https://${HOOK_NAME}:${receiver.port}/flaky`, events: ["bounced"] });
    await h.recordEvent(company, "bounced");
    await dispatcher.relayOnce();
    const [listed] = (await h.webhooks.deliveries.list({ companyId: company, endpointId: endpoint.id })).items;
    if (!listed) throw new Error("no delivery");

    const dead = await waitForDelivery(listed.id, (d) => d.state === "dead_letter");
    expect(dead).toMatchObject({ attemptCount: 3, lastStatus: 500, nextAttemptAt: null });
    expect(receiver.received.map((r) => r.headers["service-attempt"])).toEqual(["1", "2", "3"]);
    const handle = env.client.workflow.getHandle(webhookDeliveryWorkflowId(listed.id));
    await expect.poll(async () => (await handle.describe()).typedSearchAttributes.get(WEBHOOK_DELIVERY_STATUS)).toBe("dead_letter");

    receiver.handle((_request, response) => response.writeHead(200).end());
    const retried = await h.webhooks.deliveries.retry({ companyId: company, deliveryId: listed.id });
    expect(retried.state).toBe("attempting");
    expect(await dispatcher.relayOnce()).toMatchObject({ retried: 1 });
    const done = await waitForDelivery(listed.id, (d) => d.state === "succeeded");
    expect(done).toMatchObject({ attemptCount: 4, lastStatus: 200 });
    expect(receiver.received.map((r) => r.headers["service-attempt"])).toEqual(["1", "2", "3", "4"]);
    expect(new Set(receiver.received.map((r) => r.headers["service-delivery"]))).toEqual(new Set([listed.id]));
    expect(await handle.result()).toBe("succeeded");
    expect(await dispatcher.relayOnce()).toEqual({ fannedOut: 0, started: 0, retried: 0 });
  });
});

describe("a relay woken by NOTIFY", () => {
  it("delivers events recorded by SQL, and passes on a manual retry, with no polling pass and no kick", async () => {
    // An hour between polling passes: within this test only the feed's wake-ups can run a pass.
    const woken = new WebhookDeliveryDispatcher({
      client: env.client,
      taskQueue,
      outbox: h.outbox,
      schedule: { maxAttempts: 2, waitsSeconds: [1], deadLetterWaitSeconds: 300 },
      log: { warn: (details, message) => console.warn(message, details) },
      relayIntervalMs: 3_600_000,
      wakeUps: (wake) => listenForWebhookWork(h.pool, { changed: wake, listening: () => {} }),
    });
    try {
      receiver.handle((_request, response) => response.writeHead(204).end());
      const { endpoint } = await h.webhooks.endpoints.create({ companyId: company, url: `https://${HOOK_NAME}:${receiver.port}/woken`, events: ["clicked"] });
      woken.startRelay();
      // The first event may be taken by the pass that follows LISTEN; the next ones only by a notice.
      for (const n of [1, 2, 3]) {
        await h.recordEvent(company, "clicked", { n });
        await receiver.waitFor(n);
      }
      const items = (await h.webhooks.deliveries.list({ companyId: company, endpointId: endpoint.id })).items;
      expect(items).toHaveLength(3);
      for (const item of items) expect((await waitForDelivery(item.id, (d) => d.state === "succeeded")).attemptCount).toBe(1);

      // A retry asked for on a dead letter (the capability's nudge goes nowhere here): the notice passes it on.
      receiver.handle((_request, response) => response.writeHead(500).end());
      await h.recordEvent(company, "clicked", { n: 4 });
      const fourth = await (async () => {
        for (;;) {
          const listed = (await h.webhooks.deliveries.list({ companyId: company, endpointId: endpoint.id })).items;
          const added = listed.find((d) => !items.some((i) => i.id === d.id));
          if (added) return added;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      await waitForDelivery(fourth.id, (d) => d.state === "dead_letter");
      receiver.handle((_request, response) => response.writeHead(200).end());
      await h.webhooks.deliveries.retry({ companyId: company, deliveryId: fourth.id });
      expect(await waitForDelivery(fourth.id, (d) => d.state === "succeeded")).toMatchObject({ attemptCount: 3, lastStatus: 200 });
      const handle = env.client.workflow.getHandle(webhookDeliveryWorkflowId(fourth.id));
      expect(await handle.result()).toBe("succeeded");
    } finally {
      await woken.close();
    }
  });
});
