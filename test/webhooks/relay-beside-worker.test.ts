import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Client as TemporalClient, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { startWorkerProcess, type WorkerProcess } from "../../src/wiring/worker.ts";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type RoutedReceiver, startRoutedReceiver, waitUntil, loopbackDelivery } from "./api-support.ts";

/**
 * Where the webhook relay runs (issue 22, item 3): beside a worker, never
 * in an API process of its own. The worker starts each delivery's workflow
 * through its own connection with eager start, so Temporal answers the
 * start with the first workflow task and that worker runs it (the first
 * attempt included) without a trip through the task queue. Seen from
 * outside: an event published to an API process without a worker waits in
 * the outbox (no delivery, nothing at the receiver) until a worker runs,
 * then arrives once, and the delivery's history shows its first workflow
 * task started in the same instant as the workflow (eager), by that worker.
 */
describe("the webhook relay runs beside a worker", () => {
  let hooks: RoutedReceiver;
  let h: SendingHarness;
  let worker: WorkerProcess | undefined;
  let events: Client<typeof EventsService>;
  let temporal: TemporalClient;
  let connection: Connection;

  beforeAll(async () => {
    hooks = await startRoutedReceiver();
    h = await startSendingHarness({ runWorker: false, relayIntervalMs: 200 }, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate) });
    const operator: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
      return next(req);
    };
    events = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
    connection = await Connection.connect({ address: h.app.config.temporalAddress ?? "" });
    temporal = new TemporalClient({ connection, namespace: h.app.config.temporalNamespace });
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await h?.close();
    await hooks?.close();
  });

  it("an API process alone leaves the event in the outbox; a worker then starts its delivery eagerly and it arrives once", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.admin"], "Relay Co");
    await h.forCompany(WebhooksService, companyId).createWebhookEndpoint({ url: hooks.urlFor("/orders"), events: ["order.created"] });
    const { id: eventId } = await events.publishEvent({
      companyId,
      eventId: `order-${randomUUID()}`,
      event: "order.created",
      occurredAt: timestampFromDate(new Date()),
      data: { case: "order", value: { integrationId: "int_1", provider: "woocommerce", order: { number: 7 } } },
    });

    // Several of the API's relay periods (200 ms): no relay there, so no delivery and nothing received.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const before = await h.db.query(`select 1 from webhook_delivery where event_id = $1`, [eventId]);
    expect(before.rowCount).toBe(0);
    expect(hooks.on("/orders")).toHaveLength(0);

    worker = await startWorkerProcess(h.app.config, h.db.url, { warn: () => undefined }, { webhookDelivery: loopbackDelivery(hooks.certificate) });
    const [received] = await hooks.waitOn("/orders", 1, 30_000);
    expect(received).toBeDefined();
    const deliveryId = await waitUntil(async () => {
      const { rows } = await h.db.query<{ id: string }>(`select id from webhook_delivery where event_id = $1 and state = 'succeeded'`, [eventId]);
      return rows[0]?.id;
    }, "the delivery to succeed");

    const history = await temporal.workflow.getHandle(`webhook-delivery-${deliveryId}`).fetchHistory();
    const started = history.events?.find((e) => e.workflowExecutionStartedEventAttributes != null)?.workflowExecutionStartedEventAttributes;
    // Eager start: Temporal handed the first workflow task back with the start's answer.
    expect(started?.eagerExecutionAccepted).toBe(true);

    // Once at the receiver, nothing more after a few relay periods.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(hooks.on("/orders")).toHaveLength(1);
  });
});
