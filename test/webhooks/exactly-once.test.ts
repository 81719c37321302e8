import { type ChildProcess, spawn } from "node:child_process";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Client as TemporalClient, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type HttpsReceiver, makeTestCertificate, startHttpsReceiver, type TestCertificate } from "../adapters/http/https-receiver.ts";
import { HOOK_HOST, waitUntil, loopbackDelivery } from "./api-support.ts";

/**
 * Exactly-once fan-out and delivery while a worker process is SIGKILLed in
 * the middle of a stream of events: every (event, endpoint) gets one
 * delivery, one workflow, and reaches the receiver answered exactly once.
 *
 * "Answered" is what a receiver can count on: a request the receiver
 * answered 2xx on a connection that was still open when the answer was
 * handed over. A request whose connection died with the killed worker
 * before it was answered is a failed attempt for the sender too (it never
 * heard a status), and is retried with the same Service-Delivery id; the
 * test holds the answers back while it kills the worker, so the kill lands
 * on requests in flight, and counts those separately.
 *
 * The worker is a separate process (test/webhooks/worker-for-tests.ts:
 * src/worker-main.ts plus, in code, the overrides that let it reach
 * 127.0.0.1 with the test certificate); the API process runs no worker.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const EVENTS_BEFORE_KILL = 30;
const EVENTS_AFTER_KILL = 20;

interface Receipt {
  readonly deliveryId: string;
  readonly attempt: string;
  readonly path: string;
  outcome: "held" | "answered" | "aborted";
}

/** A receiver that can hold its answers back, and knows which answers reached a live connection. */
interface GatedReceiver {
  readonly receiver: HttpsReceiver;
  readonly receipts: Receipt[];
  hold(): void;
  release(): void;
}

async function startGatedReceiver(certificate: TestCertificate): Promise<GatedReceiver> {
  const receiver = await startHttpsReceiver(certificate);
  const receipts: Receipt[] = [];
  let holding = false;
  let held: Array<() => void> = [];
  receiver.handle((request, response: ServerResponse) => {
    const receipt: Receipt = {
      deliveryId: String(request.headers["service-delivery"]),
      attempt: String(request.headers["service-attempt"]),
      path: request.path,
      outcome: "held",
    };
    receipts.push(receipt);
    response.once("finish", () => (receipt.outcome = "answered"));
    response.once("close", () => {
      if (receipt.outcome === "held") receipt.outcome = "aborted";
    });
    const answer = () => {
      if (response.destroyed || response.socket?.destroyed) {
        receipt.outcome = "aborted";
        return;
      }
      response.writeHead(200).end();
    };
    if (holding) held.push(answer);
    else answer();
  });
  return {
    receiver,
    receipts,
    hold: () => void (holding = true),
    release() {
      holding = false;
      const waiting = held;
      held = [];
      for (const answer of waiting) answer();
    },
  };
}

describe("a worker SIGKILLed in the middle of a stream of webhook deliveries", () => {
  let h: SendingHarness;
  let gated: GatedReceiver;
  let dir: string;
  let caFile: string;
  let events: Client<typeof EventsService>;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    const certificate = await makeTestCertificate([HOOK_HOST]);
    gated = await startGatedReceiver(certificate);
    dir = await mkdtemp(path.join(tmpdir(), "webhook-kill-"));
    caFile = path.join(dir, "ca.pem");
    await writeFile(caFile, certificate.cert);
    h = await startSendingHarness({ runWorker: false, relayIntervalMs: 200 }, undefined, { webhookDelivery: loopbackDelivery(certificate) });
    const operator: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
      return next(req);
    };
    events = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await h?.close();
    await gated?.receiver.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function spawnWorker(): ChildProcess {
    const config = h.app.config;
    const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "test/webhooks/worker-for-tests.ts", caFile], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: h.db.url,
        TEMPORAL_ADDRESS: config.temporalAddress ?? "",
        TEMPORAL_TASK_QUEUE: config.temporalTaskQueue,
        API_KEY_PEPPER: config.apiKeyPepper,
        DATA_ENCRYPTION_KEY: config.dataEncryptionKey,
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    children.push(child);
    return child;
  }

  it("delivers every (event, endpoint) once: one delivery row, one workflow, one answered receipt each", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.admin"], "Stream Co");
    const port = gated.receiver.port;
    const endpoints = await Promise.all(
      ["/a", "/b"].map((p) => h.forCompany(WebhooksService, companyId).createWebhookEndpoint({ url: `https://${HOOK_HOST}:${port}${p}`, events: ["order.created"] })),
    );
    const publish = (n: number) =>
      events.publishEvent({
        companyId,
        eventId: `order-${n}-${randomUUID()}`,
        event: "order.created",
        occurredAt: timestampFromDate(new Date()),
        data: { case: "order", value: { integrationId: "int_1", provider: "woocommerce", order: { number: n } } },
      });

    const doomed = spawnWorker();
    // The stream: events published steadily while deliveries are made.
    for (let n = 0; n < EVENTS_BEFORE_KILL; n++) {
      await publish(n);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await waitUntil(async () => (gated.receipts.filter((r) => r.outcome === "answered").length >= 10 ? true : undefined), "the first answered deliveries", 60_000);

    // Answers held back: the worker's next requests stay in flight. Then kill it.
    gated.hold();
    await waitUntil(async () => (gated.receipts.some((r) => r.outcome === "held") ? true : undefined), "a request in flight", 60_000);
    // Answers already given are recorded meanwhile (a few milliseconds each).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    doomed.kill("SIGKILL");
    await new Promise((resolve) => doomed.once("exit", resolve));
    const inFlight = gated.receipts.filter((r) => r.outcome !== "answered").length;

    // The stream goes on with no worker; another one starts.
    for (let n = EVENTS_BEFORE_KILL; n < EVENTS_BEFORE_KILL + EVENTS_AFTER_KILL; n++) await publish(n);
    gated.release();
    spawnWorker();

    const total = (EVENTS_BEFORE_KILL + EVENTS_AFTER_KILL) * endpoints.length;
    await waitUntil(
      async () => {
        const { rows } = await h.db.query<{ n: string }>(`select count(*)::text as n from webhook_delivery where company_id = $1 and state = 'succeeded'`, [companyId]);
        return Number(rows[0]?.n) === total ? true : undefined;
      },
      `all ${total} deliveries to succeed`,
      180_000,
    );

    // One delivery per (event, endpoint), none missing.
    const perPair = await h.db.query<{ event_id: string; endpoint_id: string; n: number }>(
      `select event_id, endpoint_id, count(*)::int as n from webhook_delivery where company_id = $1 group by event_id, endpoint_id`,
      [companyId],
    );
    expect(perPair.rows).toHaveLength(total);
    expect(perPair.rows.every((row) => row.n === 1)).toBe(true);
    const outbox = await h.db.query(`select 1 from webhook_event where company_id = $1`, [companyId]);
    expect(outbox.rowCount).toBe(EVENTS_BEFORE_KILL + EVENTS_AFTER_KILL);

    // Each delivery answered exactly once at the receiver; the kill did land on requests in flight.
    const { rows: ids } = await h.db.query<{ id: string; endpoint_id: string }>(`select id, endpoint_id from webhook_delivery where company_id = $1`, [companyId]);
    const answered = new Map<string, number>();
    for (const receipt of gated.receipts) if (receipt.outcome === "answered") answered.set(receipt.deliveryId, (answered.get(receipt.deliveryId) ?? 0) + 1);
    expect([...answered.keys()].sort()).toEqual(ids.map((row) => row.id).sort());
    expect([...answered.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(inFlight).toBeGreaterThan(0);
    const aborted = gated.receipts.filter((r) => r.outcome === "aborted");
    expect(aborted.length).toBeGreaterThan(0);
    // Each request cut off by the kill went out again under the same delivery id and attempt number.
    for (const cut of aborted) {
      expect(gated.receipts.some((r) => r.deliveryId === cut.deliveryId && r.attempt === cut.attempt && r.outcome === "answered")).toBe(true);
    }
    // Every receipt went to the endpoint of its delivery.
    const endpointPath = new Map(endpoints.map((e, i) => [e.endpoint?.id ?? "", ["/a", "/b"][i]]));
    const pathOf = new Map(ids.map((row) => [row.id, endpointPath.get(row.endpoint_id)]));
    expect(gated.receipts.every((r) => pathOf.get(r.deliveryId) === r.path)).toBe(true);

    // One workflow per delivery, each closed as succeeded.
    const connection = await Connection.connect({ address: h.temporal.address });
    try {
      const temporal = new TemporalClient({ connection });
      const query = `WebhookCompanyId = "${companyId}"`;
      await waitUntil(
        async () => ((await temporal.workflow.count(`${query} AND WebhookDeliveryStatus = "succeeded"`)).count === total ? true : undefined),
        "every workflow to show succeeded",
      );
      expect((await temporal.workflow.count(query)).count).toBe(total);
    } finally {
      await connection.close();
    }
    const attempts = await h.db.query<{ n: number }>(
      `select count(*)::int as n from webhook_attempt a join webhook_delivery d on d.id = a.delivery_id where d.company_id = $1 and a.status = 200`,
      [companyId],
    );
    expect(attempts.rows[0]?.n).toBe(total);
  }, 300_000);
});
