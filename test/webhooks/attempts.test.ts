import Stripe from "stripe";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { HttpsWebhookSender } from "../../src/adapters/http/webhook-sender.ts";
import type { AttemptCommand } from "../../src/capabilities/webhooks/index.ts";
import { verifySignature } from "../../src/capabilities/webhooks/signing.ts";
import { type HttpsReceiver, makeTestCertificate, startHttpsReceiver } from "../adapters/http/https-receiver.ts";
import { openWebhooksHarness, type WebhooksHarness } from "./harness.ts";

/**
 * One attempt end to end below the workflow: the capability loads the
 * delivery, signs the body with the endpoint's live secrets, the HTTPS
 * sender posts it to a real receiver on 127.0.0.1 (trusted through a
 * test-only certificate and the test-only loopback option), and the
 * outcome is recorded in PostgreSQL. Receivers verify with the `stripe`
 * package, an independent implementation of the same signature scheme.
 */
const HOOK_NAME = "hooks.receiver.example";
const stripe = new Stripe("sk_test_not_used_no_network");

let h: WebhooksHarness;
let receiver: HttpsReceiver;
let company: string;

beforeAll(async () => {
  const certificate = await makeTestCertificate([HOOK_NAME]);
  receiver = await startHttpsReceiver(certificate);
  // The sender checks URLs with the harness's policy (and its DNS table), so it is made once the harness exists.
  const sender: { current?: HttpsWebhookSender } = {};
  h = await openWebhooksHarness({
    allowLoopback: true,
    transport: { post: (webhook) => (sender.current as HttpsWebhookSender).post(webhook) },
  });
  sender.current = new HttpsWebhookSender({ policy: h.policy, timeoutMs: 1_000, trustedCa: certificate.cert });
  h.dns.set(HOOK_NAME, ["127.0.0.1"]);
  company = await h.newCompany();
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

beforeEach(() => {
  receiver.received.length = 0;
  receiver.handle((_request, response) => response.writeHead(200).end("SECRET-RESPONSE-BODY"));
  h.dns.set(HOOK_NAME, ["127.0.0.1"]);
  h.now.value = undefined;
});

/** An endpoint on the receiver and one delivery of a fresh event for it. */
async function deliveryFor(events: string[] = ["delivered"], event = "delivered") {
  const created = await h.webhooks.endpoints.create({ companyId: company, url: `https://${HOOK_NAME}:${receiver.port}/hooks`, events });
  const occurredAt = new Date("2025-11-22T10:00:00.123Z");
  await h.recordEvent(company, event, { messageId: "msg-1", email: "ada@example.com", occurredAt: occurredAt.toISOString() }, occurredAt);
  while ((await h.outbox.fanOut(100)) > 0);
  const page = await h.webhooks.deliveries.list({ companyId: company, endpointId: created.endpoint.id });
  const delivery = page.items[0];
  if (!delivery) throw new Error("no delivery made");
  return { endpoint: created.endpoint, secret: created.secret, delivery };
}

function attempt(deliveryId: string, number: number, final = false, retryInMs: number | null = 60_000): AttemptCommand {
  return { companyId: company, deliveryId, number, final, retryInMs };
}

describe("a delivery attempt", () => {
  it("posts the signed body with the spec's headers; a receiver verifies it with stripe; the delivery succeeds", async () => {
    const { delivery, secret } = await deliveryFor();
    const answer = await h.webhooks.attempts.attempt(attempt(delivery.id, 1));
    expect(answer).toEqual({ state: "succeeded", status: 200 });

    const [request] = receiver.received;
    if (!request) throw new Error("nothing received");
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/hooks");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["user-agent"]).toBe("Service-Mail-Webhooks/1.0");
    expect(request.headers["service-delivery"]).toBe(delivery.id);
    expect(request.headers["service-attempt"]).toBe("1");
    const header = request.headers["service-signature"] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    // The receiver's side: the raw body as received, verified by an independent implementation.
    const event = stripe.webhooks.constructEvent(request.body, header, secret) as unknown as Record<string, unknown>;
    expect(event).toEqual({
      id: delivery.id,
      event: "delivered",
      occurredAt: "2025-11-22T10:00:00.123Z",
      data: { messageId: "msg-1", email: "ada@example.com", occurredAt: "2025-11-22T10:00:00.123Z" },
    });
    expect(verifySignature(request.body, header, secret, Math.floor(Date.now() / 1000))).toEqual({ ok: true });

    const detail = await h.webhooks.deliveries.get({ companyId: company, deliveryId: delivery.id });
    expect(detail.delivery).toMatchObject({ state: "succeeded", attemptCount: 1, lastStatus: 200, lastError: null, nextAttemptAt: null });
    expect(detail.attempts).toHaveLength(1);
    expect(detail.attempts[0]).toMatchObject({ number: 1, status: 200, errorClass: null });
    expect(detail.attempts[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("never stores the response body", async () => {
    const { delivery } = await deliveryFor();
    await h.webhooks.attempts.attempt(attempt(delivery.id, 1));
    const { rows } = await h.db.query(
      `select row_to_json(d)::text as d, (select json_agg(a)::text from webhook_attempt a where a.delivery_id = d.id) as a
         from webhook_delivery d where d.id = $1`,
      [delivery.id],
    );
    expect(JSON.stringify(rows)).not.toContain("SECRET-RESPONSE-BODY");
  });

  it("records a failed attempt with its status and the next attempt's time; the last failure of a round is a dead letter", async () => {
    receiver.handle((_request, response) => response.writeHead(503).end());
    const { delivery } = await deliveryFor();
    const before = Date.now();
    expect(await h.webhooks.attempts.attempt(attempt(delivery.id, 1, false, 60_000))).toEqual({ state: "attempting", status: 503 });
    let detail = await h.webhooks.deliveries.get({ companyId: company, deliveryId: delivery.id });
    expect(detail.delivery).toMatchObject({ state: "attempting", attemptCount: 1, lastStatus: 503 });
    const next = detail.delivery.nextAttemptAt?.getTime() ?? 0;
    expect(next).toBeGreaterThanOrEqual(before + 60_000);
    expect(next).toBeLessThan(Date.now() + 61_000);

    // A redirect is a failure too, and is not followed.
    receiver.handle((_request, response) => response.writeHead(302, { location: "/elsewhere" }).end());
    expect(await h.webhooks.attempts.attempt(attempt(delivery.id, 2, true, null))).toEqual({ state: "dead_letter", status: 302 });
    detail = await h.webhooks.deliveries.get({ companyId: company, deliveryId: delivery.id });
    expect(detail.delivery).toMatchObject({ state: "dead_letter", attemptCount: 2, lastStatus: 302, nextAttemptAt: null });
    expect(detail.attempts.map((a) => [a.number, a.status])).toEqual([
      [1, 503],
      [2, 302],
    ]);
    expect(receiver.received.map((r) => r.headers["service-attempt"])).toEqual(["1", "2"]);
    expect(new Set(receiver.received.map((r) => r.headers["service-delivery"]))).toEqual(new Set([delivery.id]));
  });

  it("records no status but an error class when the receiver does not answer in time", async () => {
    receiver.handle(() => {});
    const { delivery } = await deliveryFor();
    expect(await h.webhooks.attempts.attempt(attempt(delivery.id, 1))).toEqual({ state: "attempting", errorClass: "timeout" });
    const detail = await h.webhooks.deliveries.get({ companyId: company, deliveryId: delivery.id });
    expect(detail.delivery).toMatchObject({ lastStatus: null, lastError: "timeout" });
  });

  it("is made once per number: a retried activity answers the recorded attempt and posts nothing", async () => {
    receiver.handle((_request, response) => response.writeHead(500).end());
    const { delivery } = await deliveryFor();
    const first = await h.webhooks.attempts.attempt(attempt(delivery.id, 1));
    const again = await h.webhooks.attempts.attempt(attempt(delivery.id, 1));
    expect(again).toEqual(first);
    expect(receiver.received).toHaveLength(1);
    expect((await h.webhooks.deliveries.get({ companyId: company, deliveryId: delivery.id })).attempts).toHaveLength(1);
  });

  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    const { delivery, endpoint, secret: oldSecret } = await deliveryFor();
    receiver.handle((_request, response) => response.writeHead(500).end());
    const rotatedAt = new Date();
    h.now.value = rotatedAt;
    const { secret: newSecret } = await h.webhooks.endpoints.rotateSecret({ companyId: company, endpointId: endpoint.id });

    h.now.value = new Date(rotatedAt.getTime() + 23 * 3_600_000);
    await h.webhooks.attempts.attempt(attempt(delivery.id, 1));
    const during = receiver.received[0];
    if (!during) throw new Error("nothing received");
    const duringHeader = during.headers["service-signature"] as string;
    expect(duringHeader.split(",").filter((part) => part.startsWith("v1="))).toHaveLength(2);
    const t = Number(/^t=(\d+)/.exec(duringHeader)?.[1]);
    expect(t).toBe(Math.floor((rotatedAt.getTime() + 23 * 3_600_000) / 1000));
    // Receivers compare against their clock; stripe gets the time the delivery was signed at.
    for (const secret of [newSecret, oldSecret]) {
      expect(() => stripe.webhooks.constructEvent(during.body, duringHeader, secret, 300, undefined, t * 1000)).not.toThrow();
    }

    h.now.value = new Date(rotatedAt.getTime() + 24 * 3_600_000 + 1);
    await h.webhooks.attempts.attempt(attempt(delivery.id, 2));
    const after = receiver.received[1];
    if (!after) throw new Error("nothing received");
    const afterHeader = after.headers["service-signature"] as string;
    const t2 = Number(/^t=(\d+)/.exec(afterHeader)?.[1]);
    expect(afterHeader.split(",").filter((part) => part.startsWith("v1="))).toHaveLength(1);
    expect(() => stripe.webhooks.constructEvent(after.body, afterHeader, newSecret, 300, undefined, t2 * 1000)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(after.body, afterHeader, oldSecret, 300, undefined, t2 * 1000)).toThrow(/No signatures/);
  });

  it("makes no request to a disabled endpoint: the attempt fails as endpoint_disabled", async () => {
    const { delivery, endpoint } = await deliveryFor();
    await h.webhooks.endpoints.update({ companyId: company, endpointId: endpoint.id, enabled: false });
    expect(await h.webhooks.attempts.attempt(attempt(delivery.id, 1))).toEqual({ state: "attempting", errorClass: "endpoint_disabled" });
    expect(receiver.received).toHaveLength(0);
  });

  it("checks the host again before the attempt: a host that now resolves privately is not contacted", async () => {
    const { delivery } = await deliveryFor();
    h.dns.set(HOOK_NAME, ["10.0.0.9"]);
    expect(await h.webhooks.attempts.attempt(attempt(delivery.id, 1))).toEqual({ state: "attempting", errorClass: "network" });
    expect(receiver.received).toHaveLength(0);
  });

  it("answers gone once the endpoint was deleted", async () => {
    const { delivery, endpoint } = await deliveryFor();
    await h.webhooks.endpoints.delete({ companyId: company, endpointId: endpoint.id });
    expect(await h.webhooks.attempts.attempt(attempt(delivery.id, 1))).toEqual({ state: "gone" });
    expect(receiver.received).toHaveLength(0);
  });

  it("leaves a succeeded delivery succeeded", async () => {
    const { delivery } = await deliveryFor();
    await h.webhooks.attempts.attempt(attempt(delivery.id, 1));
    expect(await h.webhooks.attempts.attempt(attempt(delivery.id, 2))).toEqual({ state: "succeeded" });
    expect(receiver.received).toHaveLength(1);
  });
});
