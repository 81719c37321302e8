import { createServer } from "node:net";
import { ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { HOOK_HOST, type RoutedReceiver, startRoutedReceiver, verifiedBody, waitUntil, loopbackDelivery } from "../webhooks/api-support.ts";

/**
 * What the administration screen's Webhooks and Deliveries tabs call, over
 * HTTP (and gRPC for the test event), against the service as `npm start`
 * runs it (API, relay and worker on Temporal and PostgreSQL) and a real
 * HTTPS receiver: endpoint health over 24 hours, the deliveries list's
 * filters (endpoint, event, state, since, message id), a delivery's body as
 * sent, the retry of one dead letter and of an endpoint's dead letters
 * (with a dry-run count), and "send test event". Scope mail.admin only.
 */
interface DeliveryJson {
  id: string;
  endpointId: string;
  event: string;
  state: string;
  attemptCount: number;
}

interface HealthJson {
  deliveries: number;
  succeeded: number;
  successRate?: number;
  attempts: number;
  failedAttempts: number;
  since: string;
}

let h: SendingHarness;
let hooks: RoutedReceiver;
let sender: ReadySender;
let adminKey: string;

beforeAll(async () => {
  hooks = await startRoutedReceiver();
  // Every endpoint here is on the receiver's one host name: more than the default 3 per host.
  h = await startSendingHarness({ webhookEndpointsPerHost: 10 }, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate) });
  sender = await h.readySender({ credits: 50 });
  adminKey = (await h.newKey(sender.companyId, ["mail.admin"], "webhooks admin")).secret;
});

afterAll(async () => {
  await h?.close();
  await hooks?.close();
});

async function call(method: string, path: string, body?: unknown, key = adminKey): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const response = await h.fetch(path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, text };
}

async function createEndpoint(url: string, events: string[]): Promise<{ id: string; secret: string }> {
  const created = await call("POST", "/mail/v1/webhooks", { url, events });
  expect(created.status, created.text).toBe(201);
  return { id: (created.json.endpoint as { id: string }).id, secret: created.json.secret as string };
}

async function sendMessage(to: string): Promise<string> {
  const response = await h.send(sender.secret, { to, subject: "Your receipt", html: "<p>Thanks</p>" });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

async function list(query: string): Promise<DeliveryJson[]> {
  const listed = await call("GET", `/mail/v1/webhooks/deliveries${query}`);
  expect(listed.status, listed.text).toBe(200);
  return listed.json.items as DeliveryJson[];
}

function waitForState(endpointId: string, messageId: string, state: string): Promise<DeliveryJson> {
  return waitUntil(async () => (await list(`?endpointId=${endpointId}&messageId=${messageId}&state=${state}`))[0], `a ${state} delivery`, 60_000);
}

async function healthOf(endpointId: string): Promise<HealthJson> {
  const got = await call("GET", `/mail/v1/webhooks/${endpointId}`);
  expect(got.status, got.text).toBe(200);
  return got.json.health as HealthJson;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("deliveries: message filter, body as sent, dead letters retried one by one and per endpoint", () => {
  let failing: { id: string; secret: string };
  let healthy: { id: string; secret: string };
  let first: string;
  let deadLetter: DeliveryJson;
  const since = new Date(Date.now() - 60_000).toISOString();

  beforeAll(async () => {
    hooks.answer("/screen/fail", { status: 500, body: "down" });
    failing = await createEndpoint(hooks.urlFor("/screen/fail"), ["sent"]);
    healthy = await createEndpoint(hooks.urlFor("/screen/ok"), ["sent", "delivered"]);
    first = await sendMessage("first@screen.example");
    deadLetter = await waitForState(failing.id, first, "dead_letter");
  });

  it("lists the deliveries a message caused, and only those", async () => {
    const second = await sendMessage("second@screen.example");
    await waitUntil(async () => ((await list(`?messageId=${second}`)).length >= 2 ? true : undefined), "the second message's deliveries");
    const ofFirst = await list(`?messageId=${first}`);
    const ofSecond = await list(`?messageId=${second}`);
    expect(ofFirst.map((d) => d.id)).toContain(deadLetter.id);
    expect(ofFirst.filter((d) => ofSecond.some((s) => s.id === d.id))).toEqual([]);
    for (const delivery of ofFirst) {
      const detail = await call("GET", `/mail/v1/webhooks/deliveries/${delivery.id}`);
      expect((JSON.parse(detail.json.body as string) as { data: { messageId: string } }).data.messageId).toBe(first);
    }
    // Combined with the other filters.
    expect((await list(`?messageId=${first}&endpointId=${healthy.id}&event=sent`)).map((d) => d.event)).toEqual(["sent"]);
    expect(await list(`?messageId=${first}&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await list(`?messageId=00000000-0000-4000-8000-000000000000`)).toEqual([]);
  });

  it("a delivery page carries the body as sent: the bytes the receiver got and verified", async () => {
    const detail = await call("GET", `/mail/v1/webhooks/deliveries/${deadLetter.id}`);
    expect(detail.status, detail.text).toBe(200);
    const received = hooks.on("/screen/fail").find((r) => (JSON.parse(r.body) as { id: string }).id === deadLetter.id);
    expect(received).toBeDefined();
    expect(detail.json.body).toBe(received?.body);
    expect(verifiedBody(received as NonNullable<typeof received>, failing.secret).data.messageId).toBe(first);
    expect((detail.json.attempts as unknown[]).length).toBe(5);
  });

  it("endpoint health counts the last 24 hours: the failing endpoint 0 of 1, the healthy one all", async () => {
    const bad = await healthOf(failing.id);
    expect(bad).toMatchObject({ succeeded: 0, successRate: 0 });
    expect(bad.deliveries).toBeGreaterThanOrEqual(1);
    expect(bad.failedAttempts).toBe(bad.attempts);
    expect(bad.attempts).toBeGreaterThanOrEqual(5);
    await waitUntil(async () => ((await healthOf(healthy.id)).deliveries >= 2 ? true : undefined), "healthy deliveries");
    const good = await healthOf(healthy.id);
    expect(good.successRate).toBe(1);
    expect(good.failedAttempts).toBe(0);
    // The list carries the same health.
    const listed = await call("GET", "/mail/v1/webhooks");
    const row = (listed.json.items as { id: string; health: HealthJson }[]).find((e) => e.id === failing.id);
    expect(row?.health).toMatchObject({ succeeded: 0, successRate: 0 });
  });

  it("a dry run counts the endpoint's dead letters and retries nothing", async () => {
    // Counted for the dead letter itself: other deliveries to the failing endpoint may still be on their schedule.
    const hitsOfDeadLetter = (): number => hooks.on("/screen/fail").filter((r) => (JSON.parse(r.body) as { id: string }).id === deadLetter.id).length;
    const before = hitsOfDeadLetter();
    const dry = await call("POST", `/mail/v1/webhooks/${failing.id}/retry-dead-letters`, { since, dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.json).toMatchObject({ retried: 0, deadLetters: 1 });
    const still = await call("GET", `/mail/v1/webhooks/deliveries/${deadLetter.id}`);
    expect((still.json.delivery as DeliveryJson).state).toBe("dead_letter");
    expect(hitsOfDeadLetter()).toBe(before);
  });

  it("retries one dead letter once the receiver recovers: it is delivered", async () => {
    hooks.answer("/screen/fail", { status: 200 });
    const retried = await call("POST", `/mail/v1/webhooks/deliveries/${deadLetter.id}/retry`, {});
    expect(retried.status, retried.text).toBe(200);
    await waitForState(failing.id, first, "succeeded");
    const detail = await call("GET", `/mail/v1/webhooks/deliveries/${deadLetter.id}`);
    expect((detail.json.attempts as { number: number; status?: number }[]).at(-1)).toMatchObject({ number: 6, status: 200 });
  });

  it("retries every dead letter of the endpoint since a time, after a count to confirm", async () => {
    hooks.answer("/screen/fail", { status: 502 });
    const third = await sendMessage("third@screen.example");
    await waitForState(failing.id, third, "dead_letter");
    // Everything of the endpoint has settled (the second message's delivery too).
    await waitUntil(
      async () => ((await list(`?endpointId=${failing.id}&state=attempting`)).length + (await list(`?endpointId=${failing.id}&state=pending`)).length === 0 ? true : undefined),
      "the endpoint's deliveries to settle",
      60_000,
    );
    const dead = await list(`?endpointId=${failing.id}&state=dead_letter`);
    expect(dead.length).toBeGreaterThanOrEqual(1);
    const dry = await call("POST", `/mail/v1/webhooks/${failing.id}/retry-dead-letters`, { since, dryRun: true });
    expect(dry.json).toMatchObject({ retried: 0, deadLetters: dead.length });
    hooks.answer("/screen/fail", { status: 204 });
    const done = await call("POST", `/mail/v1/webhooks/${failing.id}/retry-dead-letters`, { since });
    expect(done.status, done.text).toBe(200);
    expect(done.json).toMatchObject({ retried: dead.length, deadLetters: dead.length });
    await waitUntil(
      async () => {
        const succeeded = await list(`?endpointId=${failing.id}&state=succeeded&limit=100`);
        return dead.every((d) => succeeded.some((s) => s.id === d.id)) ? true : undefined;
      },
      "every retried dead letter to be delivered",
      60_000,
    );
    expect(await list(`?endpointId=${failing.id}&state=dead_letter`)).toEqual([]);
  });
});

describe("send test event", () => {
  let endpoint: { id: string; secret: string };

  beforeAll(async () => {
    endpoint = await createEndpoint(hooks.urlFor("/screen/test"), ["delivered"]);
  });

  it("delivers a signed example now and answers the attempt; nothing is recorded", async () => {
    const answer = await call("POST", `/mail/v1/webhooks/${endpoint.id}/test`, { event: "bounced" });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({ event: "bounced", succeeded: true, status: 200 });
    expect(answer.json.error ?? null).toBeNull();
    expect(typeof answer.json.durationMs).toBe("number");
    const [received] = hooks.on("/screen/test");
    expect(received).toBeDefined();
    const body = verifiedBody(received as NonNullable<typeof received>, endpoint.secret);
    expect(body).toMatchObject({ id: answer.json.deliveryId, event: "bounced", data: { test: true } });
    expect(received?.headers["service-delivery"]).toBe(answer.json.deliveryId);
    expect(answer.json.body).toBe(received?.body);
    expect(await list(`?endpointId=${endpoint.id}`)).toEqual([]);
  });

  it("answers the receiver's status when it fails, and `network` (nothing finer) when nothing listens", async () => {
    hooks.answer("/screen/test", { status: 503, body: "SHOULD-NOT-BE-SHOWN" });
    const failed = await call("POST", `/mail/v1/webhooks/${endpoint.id}/test`, { event: "delivered" });
    expect(failed.json).toMatchObject({ succeeded: false, status: 503 });
    expect(failed.text).not.toContain("SHOULD-NOT-BE-SHOWN");

    const closed = await createEndpoint(`https://${HOOK_HOST}:${await closedPort()}/nobody`, ["sent"]);
    const refused = await call("POST", `/mail/v1/webhooks/${closed.id}/test`, { event: "sent" });
    expect(refused.status, refused.text).toBe(200);
    expect(refused.json).toMatchObject({ succeeded: false, error: "network" });
    expect(refused.json.status ?? null).toBeNull();
  });

  it("over gRPC too", async () => {
    hooks.answer("/screen/test", { status: 200 });
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${adminKey}`);
      return next(req);
    };
    const grpc = createClient(WebhooksService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [bearer] }));
    const result = await grpc.sendTestWebhookEvent({ id: endpoint.id, event: "order.paid" });
    expect(result).toMatchObject({ succeeded: true, status: 200, event: "order.paid" });
  });

  it("refuses an unknown event (400), another company's endpoint (404) and a key without mail.admin (403)", async () => {
    expect((await call("POST", `/mail/v1/webhooks/${endpoint.id}/test`, { event: "nope" })).status).toBe(400);
    const other = await h.newCompanyWithKey(["mail.admin"], "Other Co");
    const foreign = await call("POST", `/mail/v1/webhooks/${endpoint.id}/test`, { event: "sent" }, other.secret);
    expect(foreign.status, foreign.text).toBe(404);
    const before = hooks.on("/screen/test").length;
    const reader = await h.newKey(sender.companyId, ["mail.events.read"], "reader");
    expect((await call("POST", `/mail/v1/webhooks/${endpoint.id}/test`, { event: "sent" }, reader.secret)).status).toBe(403);
    expect(hooks.on("/screen/test").length).toBe(before);
    expect(ConnectError).toBeDefined();
  });
});
