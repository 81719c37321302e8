import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerProcess, type WorkerProcess } from "../../src/wiring/worker.ts";
import { eventually, sample } from "../deploy/processes.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type RoutedReceiver, startRoutedReceiver, loopbackDelivery } from "../webhooks/api-support.ts";

/**
 * A worker's own counters (what src/worker-main.ts serves on /metrics):
 * activities by outcome and webhook delivery attempts by outcome, as the
 * worker runs them: a message handed off and its `delivered` event
 * delivered to one receiver that answers 200 and one that answers 500.
 * The worker is built as worker-main builds it, in this process, with the
 * overrides that let it reach the test receiver on 127.0.0.1.
 */
describe("a worker's own metrics", () => {
  let hooks: RoutedReceiver;
  let h: SendingHarness;
  let worker: WorkerProcess;

  beforeAll(async () => {
    hooks = await startRoutedReceiver();
    hooks.answer("/refuses", { status: 500 });
    const overrides = loopbackDelivery(hooks.certificate);
    h = await startSendingHarness({ runWorker: false }, undefined, { webhookDelivery: overrides });
    worker = await startWorkerProcess(h.app.config, h.db.url, { warn: () => undefined }, { webhookDelivery: overrides, processMetrics: true });
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await h?.close();
    await hooks?.close();
  });

  it("count the activities it ran and the webhook attempts it made, by outcome, and its pool", async () => {
    const sender = await h.readySender({ scopes: ["mail.transactional.send", "mail.events.read", "mail.admin"] });
    for (const path of ["/accepts", "/refuses"]) {
      const endpoint = await h.fetch("/mail/v1/webhooks", {
        method: "POST",
        headers: { authorization: `Bearer ${sender.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ url: hooks.urlFor(path), events: ["delivered"] }),
      });
      expect(endpoint.status).toBe(201);
    }
    const accepted = await h.send(sender.secret, { to: "delivered@customer.example", subject: "Receipt", html: "<p>Thanks</p>" });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    await h.waitForMessage(sender.secret, id, (m) => m.status === "delivered");
    await hooks.waitOn("/accepts", 1);
    await hooks.waitOn("/refuses", 2);

    // An attempt is counted once its activity has recorded it, a moment after the receiver answered.
    const body = await eventually(
      async () => (await worker.metrics.scrape()).body,
      (text) => sample(text, "mail_worker_activities_total", { activity: "attemptDelivery", outcome: "completed" }) >= 3,
      15_000,
      "three attempts counted",
    );
    expect((await worker.metrics.scrape()).contentType).toContain("text/plain");
    expect(sample(body, "mail_worker_activities_total", { activity: "attemptHandOff", outcome: "completed" })).toBeGreaterThanOrEqual(1);
    expect(sample(body, "mail_worker_activities_total", { activity: "attemptDelivery", outcome: "completed" })).toBeGreaterThanOrEqual(3);
    expect(sample(body, "mail_worker_webhook_attempts_total", { outcome: "success" })).toBe(1);
    expect(sample(body, "mail_worker_webhook_attempts_total", { outcome: "http_error" })).toBeGreaterThanOrEqual(2);
    expect(sample(body, "mail_worker_activities_in_flight", { activity: "attemptHandOff" })).toBe(0);
    expect(sample(body, "mail_db_pool_connections", { state: "max" })).toBe(h.app.config.workerPoolMax);
    expect(body).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });
});
