import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorFrom } from "../../src/contract/api-error.ts";
import { WebhookDeliveryState, WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import {
  type DeliveryBody,
  PRIVATE_HOST,
  type RoutedReceiver,
  signatures,
  startRoutedReceiver,
  type TestClock,
  testClock,
  verifiedBody,
  verifies,
  waitUntil,
  loopbackDelivery,
} from "../webhooks/api-support.ts";

/**
 * Signed webhooks end to end, as a customer sees them: the service started
 * the way `npm start` starts it (API, relay and Temporal worker on a
 * Temporal dev server and PostgreSQL), a company administrator's key
 * (scope mail.admin) operating endpoints over the JSON routes and over
 * gRPC, a real HTTPS receiver, and every delivery verified by an
 * independent verifier (stripe's). The test overrides only let the service
 * reach 127.0.0.1 with the test certificate, shorten the waits between
 * attempts to a second and move the capability's clock.
 */
interface EndpointJson {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface DeliveryJson {
  id: string;
  endpointId: string;
  event: string;
  state: string;
  attemptCount: number;
  lastStatus: number | null;
  lastError: string | null;
  occurredAt: string;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
}

interface AttemptJson {
  number: number;
  attemptedAt: string;
  durationMs: number;
  status: number | null;
  error: string | null;
}

const NEVER_RECORDED = "RESPONSE-BODY-THAT-MUST-NEVER-BE-STORED";

let h: SendingHarness;
let hooks: RoutedReceiver;
let clock: TestClock;
let sender: ReadySender;
/** A key of sender's company with scope mail.admin only. */
let adminKey: string;

beforeAll(async () => {
  hooks = await startRoutedReceiver();
  clock = testClock();
  // Every endpoint here is on the receiver's one host name: more than the default 3 per host (test/hostile/endpoint-flood.test.ts proves the limit).
  h = await startSendingHarness({ webhookEndpointsPerHost: 100 }, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate, clock) });
  sender = await h.readySender({ credits: 50 });
  adminKey = (await h.newKey(sender.companyId, ["mail.admin"], "webhooks admin")).secret;
});

afterAll(async () => {
  await h?.close();
  await hooks?.close();
});

async function call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const response = await h.fetch(path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, text };
}

async function createEndpoint(path: string, events: string[], key = adminKey): Promise<{ endpoint: EndpointJson; secret: string }> {
  const created = await call("POST", "/mail/v1/webhooks", key, { url: hooks.urlFor(path), events, description: `receiver ${path}` });
  expect(created.status, created.text).toBe(201);
  return created.json as unknown as { endpoint: EndpointJson; secret: string };
}

async function sendMessage(to: string): Promise<string> {
  const response = await h.send(sender.secret, { to, subject: "Your receipt", html: "<p>Thanks</p>" });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

async function deliveries(query: string, key = adminKey): Promise<{ items: DeliveryJson[]; nextCursor: string | null }> {
  const listed = await call("GET", `/mail/v1/webhooks/deliveries${query}`, key);
  expect(listed.status, listed.text).toBe(200);
  return listed.json as unknown as { items: DeliveryJson[]; nextCursor: string | null };
}

async function deliveryDetail(id: string): Promise<{ delivery: DeliveryJson; attempts: AttemptJson[] }> {
  const got = await call("GET", `/mail/v1/webhooks/deliveries/${id}`, adminKey);
  expect(got.status, got.text).toBe(200);
  return got.json as unknown as { delivery: DeliveryJson; attempts: AttemptJson[] };
}

function waitForDeliveryState(id: string, state: string): Promise<{ delivery: DeliveryJson; attempts: AttemptJson[] }> {
  return waitUntil(async () => {
    const detail = await deliveryDetail(id);
    return detail.delivery.state === state ? detail : undefined;
  }, `delivery ${id} to be ${state}`);
}

/** The received requests of `path` whose body is about the message `messageId`. */
function bodiesFor(path: string, secret: string, messageId: string): DeliveryBody[] {
  return hooks
    .on(path)
    .filter((request) => (JSON.parse(request.body) as DeliveryBody).data.messageId === messageId)
    .map((request) => verifiedBody(request, secret));
}

describe("a company administrator's endpoint receives signed events of a sent message", () => {
  let endpoint: EndpointJson;
  let secret: string;
  const PATH = "/ok/orders";

  it("creates the endpoint over REST; the secret is in that answer only", async () => {
    ({ endpoint, secret } = await createEndpoint(PATH, ["message.accepted", "sent", "delivered"]));
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(endpoint).toMatchObject({
      url: hooks.urlFor(PATH),
      description: `receiver ${PATH}`,
      events: ["message.accepted", "sent", "delivered"],
      enabled: true,
      previousSecretExpiresAt: null,
    });

    const got = await call("GET", `/mail/v1/webhooks/${endpoint.id}`, adminKey);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ id: endpoint.id, url: hooks.urlFor(PATH) });
    const listed = await call("GET", "/mail/v1/webhooks", adminKey);
    expect((listed.json.items as EndpointJson[]).map((e) => e.id)).toContain(endpoint.id);
    for (const answer of [got, listed]) expect(answer.text).not.toContain(secret);
  });

  it("delivers message.accepted, sent and delivered, each verified, tied to the send call's id", async () => {
    const messageId = await sendMessage("delivered@customer.example");
    await waitUntil(async () => (bodiesFor(PATH, secret, messageId).length >= 3 ? true : undefined), "three events");
    const bodies = bodiesFor(PATH, secret, messageId);
    expect(bodies.map((b) => b.event).sort()).toEqual(["delivered", "message.accepted", "sent"]);

    for (const body of bodies) {
      // The spec's data fields, exactly (Event kinds table).
      const expectedKeys = body.event === "message.accepted" ? ["email", "messageId", "occurredAt", "providerMessageId"] : ["email", "messageId", "occurredAt"];
      expect(Object.keys(body.data).sort(), body.event).toEqual(expectedKeys);
      expect(body.data).toMatchObject({ messageId, email: "delivered@customer.example" });
      expect(body.occurredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    const message = await h.waitForMessage(sender.secret, messageId, (m) => m.status === "delivered");
    expect(bodies.find((b) => b.event === "message.accepted")?.data.providerMessageId).toBe(message.providerMessageId);

    for (const request of hooks.on(PATH)) {
      const body = JSON.parse(request.body) as DeliveryBody;
      if (body.data.messageId !== messageId) continue;
      expect(request.method).toBe("POST");
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["user-agent"]).toBe("Service-Mail-Webhooks/1.0");
      expect(request.headers["service-delivery"]).toBe(body.id);
      expect(request.headers["service-attempt"]).toBe("1");
      expect(signatures(request)).toHaveLength(1);
      // A receiver with another secret refuses it.
      expect(verifies(request, "whsec_someone_else")).toBe(false);
    }
    for (const body of bodies) {
      const done = await waitForDeliveryState(body.id, "succeeded");
      expect(done.delivery).toMatchObject({ endpointId: endpoint.id, event: body.event, attemptCount: 1, lastStatus: 200 });
    }
  });

  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    const rotated = await call("POST", `/mail/v1/webhooks/${endpoint.id}/rotate-secret`, adminKey, {});
    expect(rotated.status, rotated.text).toBe(200);
    const newSecret = rotated.json.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    const overlapEnd = Date.parse((rotated.json.endpoint as EndpointJson).previousSecretExpiresAt ?? "");
    expect(overlapEnd - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect(overlapEnd - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);

    // During the overlap: two v1 values; a receiver holding either secret accepts.
    const during = await sendMessage("delivered@rotation.example");
    await waitUntil(async () => (bodiesFor(PATH, newSecret, during).length >= 3 ? true : undefined), "events during the overlap");
    for (const request of hooks.on(PATH).filter((r) => r.body.includes(during))) {
      expect(signatures(request)).toHaveLength(2);
      expect(verifies(request, newSecret)).toBe(true);
      expect(verifies(request, secret)).toBe(true);
    }

    // 24 hours and a minute later (the capability's clock, and the receiver's).
    clock.offsetMs = 24 * 3_600_000 + 60_000;
    try {
      const later = await sendMessage("delivered@after-rotation.example");
      const receiverNow = () => Math.floor(clock.now().getTime() / 1000);
      await waitUntil(
        async () => (hooks.on(PATH).filter((r) => r.body.includes(later)).length >= 3 ? true : undefined),
        "events after the overlap",
      );
      for (const request of hooks.on(PATH).filter((r) => r.body.includes(later))) {
        expect(signatures(request)).toHaveLength(1);
        expect(verifies(request, newSecret, receiverNow())).toBe(true);
        expect(verifies(request, secret, receiverNow())).toBe(false);
      }
      const got = await call("GET", `/mail/v1/webhooks/${endpoint.id}`, adminKey);
      expect((got.json as unknown as EndpointJson).previousSecretExpiresAt).toBeNull();
    } finally {
      clock.offsetMs = 0;
    }
    secret = newSecret;
  });
});

describe("the other transactional events", () => {
  it("carry exactly the spec's data fields: bounced and complaint as sent, failed with error", async () => {
    const PATH = "/ok/outcomes";
    const { secret } = await createEndpoint(PATH, ["bounced", "complaint", "failed"]);
    const bounced = await sendMessage("bounce@outcomes.example");
    const complained = await sendMessage("complaint@outcomes.example");
    const rejected = await sendMessage("reject@outcomes.example");
    await h.waitForMessage(sender.secret, bounced, (m) => m.status === "bounced");
    // The bounce suppressed the address: the next send to it is not sent.
    const suppressed = await sendMessage("bounce@outcomes.example");

    const expected: Array<[string, string, Record<string, unknown>]> = [
      [bounced, "bounced", {}],
      [complained, "complaint", {}],
      [rejected, "failed", { error: "REJECTED" }],
      [suppressed, "failed", { error: "SUPPRESSED" }],
    ];
    for (const [messageId, event, extra] of expected) {
      const [body] = await waitUntil(async () => {
        const found = bodiesFor(PATH, secret, messageId);
        return found.length > 0 ? found : undefined;
      }, `${event} of ${messageId}`);
      expect(body?.event).toBe(event);
      expect(Object.keys(body?.data ?? {}).sort(), event).toEqual(["email", "messageId", "occurredAt", ...Object.keys(extra)].sort());
      expect(body?.data).toMatchObject({ messageId, ...extra });
    }
  });
});

describe("a failing receiver", () => {
  const FAIL = "/failing/hook";
  let endpoint: EndpointJson;
  let secret: string;
  let deadId: string;

  it("gets 5 attempts, then the delivery is a dead letter with every attempt's status and never the body", async () => {
    hooks.answer("/failing/", { status: 500, body: NEVER_RECORDED });
    ({ endpoint, secret } = await createEndpoint(FAIL, ["delivered"]));
    const messageId = await sendMessage("delivered@failing.example");

    const first = await waitUntil(async () => hooks.on(FAIL)[0], "the first attempt");
    deadId = verifiedBody(first, secret).id;
    const dead = await waitForDeliveryState(deadId, "dead_letter");
    expect(dead.delivery).toMatchObject({ endpointId: endpoint.id, event: "delivered", attemptCount: 5, lastStatus: 500, nextAttemptAt: null });
    expect(dead.attempts.map((a) => [a.number, a.status, a.error])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 500, null]));

    const received = hooks.on(FAIL).filter((r) => r.headers["service-delivery"] === deadId);
    expect(received.map((r) => r.headers["service-attempt"])).toEqual(["1", "2", "3", "4", "5"]);
    for (const request of received) expect(verifiedBody(request, secret).data.messageId).toBe(messageId);

    // Only the status: the body is in no answer and in no row.
    expect(JSON.stringify(dead)).not.toContain(NEVER_RECORDED);
    const stored = await h.db.query(`select row_to_json(a)::text as row from webhook_attempt a where delivery_id = $1`, [deadId]);
    expect(stored.rowCount).toBe(5);
    for (const row of stored.rows as Array<{ row: string }>) expect(row.row).not.toContain(NEVER_RECORDED);
    const deliveryRow = await h.db.query(`select row_to_json(d)::text as row from webhook_delivery d where id = $1`, [deadId]);
    expect((deliveryRow.rows[0] as { row: string }).row).not.toContain(NEVER_RECORDED);
  });

  it("still gets new events, while the dead letter is not retried automatically", async () => {
    hooks.answer("/failing/", { status: 200 });
    const messageId = await sendMessage("delivered@after-dead-letter.example");
    await waitUntil(async () => (bodiesFor(FAIL, secret, messageId).length >= 1 ? true : undefined), "the new event");
    const fresh = bodiesFor(FAIL, secret, messageId)[0] as DeliveryBody;
    await waitForDeliveryState(fresh.id, "succeeded");

    const dead = await deliveryDetail(deadId);
    expect(dead.delivery).toMatchObject({ state: "dead_letter", attemptCount: 5 });
    expect(hooks.on(FAIL).filter((r) => r.headers["service-delivery"] === deadId)).toHaveLength(5);
  });

  it("delivers the dead letter on a manual retry over REST, as attempt 6 of the same delivery", async () => {
    const retried = await call("POST", `/mail/v1/webhooks/deliveries/${deadId}/retry`, adminKey, {});
    expect(retried.status, retried.text).toBe(200);
    expect((retried.json.delivery as DeliveryJson).state).toBe("attempting");

    const done = await waitForDeliveryState(deadId, "succeeded");
    expect(done.delivery).toMatchObject({ attemptCount: 6, lastStatus: 200 });
    expect(done.attempts.map((a) => a.status)).toEqual([500, 500, 500, 500, 500, 200]);
    const received = hooks.on(FAIL).filter((r) => r.headers["service-delivery"] === deadId);
    expect(received.map((r) => r.headers["service-attempt"])).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(new Set(received.map((r) => verifiedBody(r, secret).id))).toEqual(new Set([deadId]));

    // Only a dead letter can be retried.
    const again = await call("POST", `/mail/v1/webhooks/deliveries/${deadId}/retry`, adminKey, {});
    expect(again.status).toBe(400);
    expect((again.json.error as { code: string }).code).toBe("VALIDATION_ERROR");
  });

  it("lists deliveries with filters and pages", async () => {
    const ofEndpoint = await deliveries(`?endpointId=${endpoint.id}`);
    expect(ofEndpoint.items.length).toBe(2);
    expect(ofEndpoint.items.every((d) => d.endpointId === endpoint.id && d.event === "delivered")).toBe(true);
    // Newest first.
    expect(ofEndpoint.items.map((d) => d.id)).toContain(deadId);
    expect(Date.parse(ofEndpoint.items[0]?.createdAt ?? "")).toBeGreaterThanOrEqual(Date.parse(ofEndpoint.items[1]?.createdAt ?? ""));

    const accepted = await deliveries(`?event=message.accepted`);
    expect(accepted.items.length).toBeGreaterThan(0);
    expect(accepted.items.every((d) => d.event === "message.accepted")).toBe(true);
    expect((await deliveries(`?state=dead_letter`)).items).toEqual([]);
    expect((await deliveries(`?state=succeeded&endpointId=${endpoint.id}`)).items).toHaveLength(2);
    expect((await deliveries(`?until=2000-01-01T00:00:00Z`)).items).toEqual([]);
    expect((await deliveries(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).items).toEqual([]);

    const all = await deliveries("?limit=100");
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: DeliveryJson[]; nextCursor: string | null } = await deliveries(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.items.map((d) => d.id));

    const bad = await call("GET", "/mail/v1/webhooks/deliveries?limit=500&event=nope", adminKey);
    expect(bad.status).toBe(400);
    expect((bad.json.error as { message: string }).message).toMatch(/limit.*event|event.*limit/);
  });
});

describe("access to the webhook routes", () => {
  /** Every webhook route, with the ids of company A's endpoint and delivery. */
  function routes(endpointId: string, deliveryId: string): Array<[string, string, unknown?]> {
    return [
      ["GET", `/mail/v1/webhooks/${endpointId}`],
      ["PATCH", `/mail/v1/webhooks/${endpointId}`, { enabled: false }],
      ["DELETE", `/mail/v1/webhooks/${endpointId}`],
      ["POST", `/mail/v1/webhooks/${endpointId}/rotate-secret`, {}],
      ["POST", `/mail/v1/webhooks/${endpointId}/retry-dead-letters`, { since: "2000-01-01T00:00:00Z" }],
      ["GET", `/mail/v1/webhooks/deliveries/${deliveryId}`],
      ["POST", `/mail/v1/webhooks/deliveries/${deliveryId}/retry`, {}],
    ];
  }

  it("keeps each company's endpoints and deliveries to itself: another company's ids are 404 on every route", async () => {
    const { endpoint } = await createEndpoint("/ok/isolated", ["sent"]);
    await sendMessage("delivered@isolated.example");
    const delivery = await waitUntil(async () => (await deliveries(`?endpointId=${endpoint.id}`)).items[0], "a delivery");

    const other = await h.newCompanyWithKey(["mail.admin"], "Other Co");
    for (const [method, path, body] of routes(endpoint.id, delivery.id)) {
      const answer = await call(method, path, other.secret, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect((answer.json.error as { code: string }).code).toBe("NOT_FOUND");
    }
    expect((await call("GET", "/mail/v1/webhooks", other.secret)).json).toEqual({ items: [] });
    expect((await deliveries("", other.secret)).items).toEqual([]);
    expect((await deliveries(`?endpointId=${endpoint.id}`, other.secret)).items).toEqual([]);

    // Still there, unchanged, for its own company.
    const mine = await call("GET", `/mail/v1/webhooks/${endpoint.id}`, adminKey);
    expect(mine.json).toMatchObject({ id: endpoint.id, enabled: true });
  });

  it("answers 403 FORBIDDEN to a key without mail.admin on every route, 401 without a key", async () => {
    const { endpoint } = await createEndpoint("/ok/forbidden", ["sent"]);
    const everyRoute: Array<[string, string, unknown?]> = [
      ["POST", "/mail/v1/webhooks", { url: hooks.urlFor("/ok/x"), events: ["sent"] }],
      ["GET", "/mail/v1/webhooks"],
      ["GET", "/mail/v1/webhooks/deliveries"],
      ...routes(endpoint.id, "00000000-0000-4000-8000-000000000000"),
    ];
    for (const [method, path, body] of everyRoute) {
      const answer = await call(method, path, sender.secret, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect((answer.json.error as { code: string }).code).toBe("FORBIDDEN");
      const anonymous = await h.fetch(path, { method });
      expect(anonymous.status, `${method} ${path}`).toBe(401);
    }
    expect((await call("GET", `/mail/v1/webhooks/${endpoint.id}`, adminKey)).json).toMatchObject({ enabled: true });
  });

  it("refuses private and internal hosts on save with 400 WEBHOOK_HOST_NOT_ALLOWED, and plain http with VALIDATION_ERROR", async () => {
    for (const url of ["https://10.1.2.3/hook", "https://192.168.1.20/hook", `https://${PRIVATE_HOST}/hook`, "https://metadata.internal/hook", "https://[fd00::1]/hook"]) {
      const answer = await call("POST", "/mail/v1/webhooks", adminKey, { url, events: ["sent"] });
      expect(answer.status, url).toBe(400);
      expect((answer.json.error as { code: string }).code, url).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    }
    const { endpoint } = await createEndpoint("/ok/moving", ["sent"]);
    const moved = await call("PATCH", `/mail/v1/webhooks/${endpoint.id}`, adminKey, { url: "https://10.0.0.7/hook" });
    expect(moved.status).toBe(400);
    expect((moved.json.error as { code: string }).code).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    const http = await call("POST", "/mail/v1/webhooks", adminKey, { url: "http://example.com/hook", events: ["sent"] });
    expect(http.status).toBe(400);
    expect((http.json.error as { code: string }).code).toBe("VALIDATION_ERROR");
  });
});

describe("the same operations over gRPC", () => {
  let grpc: Client<typeof WebhooksService>;

  beforeAll(() => {
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${adminKey}`);
      return next(req);
    };
    grpc = createClient(WebhooksService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [bearer] }));
  });

  async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
    try {
      await promise;
      return "resolved";
    } catch (error) {
      return apiErrorFrom(error)?.code;
    }
  }

  it("creates, reads, changes, rotates, lists deliveries, retries and deletes", async () => {
    hooks.answer("/grpc/", { status: 503 });
    const created = await grpc.createWebhookEndpoint({ url: hooks.urlFor("/grpc/in"), events: ["sent"], description: "over gRPC" });
    const id = created.endpoint?.id ?? "";
    expect(created.secret).toMatch(/^whsec_/);
    expect((await grpc.getWebhookEndpoint({ id })).endpoint?.description).toBe("over gRPC");
    expect((await grpc.listWebhookEndpoints({})).items.map((e) => e.id)).toContain(id);
    expect((await grpc.updateWebhookEndpoint({ id, events: ["sent", "delivered"] })).endpoint?.events).toEqual(["sent", "delivered"]);

    const messageId = await sendMessage("delivered@grpc.example");
    const dead = await waitUntil(async () => {
      const page = await grpc.listWebhookDeliveries({ endpointId: id, state: WebhookDeliveryState.DEAD_LETTER });
      return page.items.length === 2 ? page.items : undefined;
    }, "two dead letters over gRPC");
    const detail = await grpc.getWebhookDelivery({ id: dead[0]?.id ?? "" });
    expect(detail.attempts.map((a) => a.status)).toEqual([503, 503, 503, 503, 503]);
    expect(hooks.on("/grpc/in").every((r) => verifiedBody(r, created.secret).data.messageId === messageId)).toBe(true);

    hooks.answer("/grpc/", { status: 204 });
    expect((await grpc.retryWebhookDelivery({ id: dead[0]?.id ?? "" })).delivery?.state).toBe(WebhookDeliveryState.ATTEMPTING);
    const since = timestampFromDate(new Date(Date.now() - 3_600_000));
    expect((await grpc.retryWebhookDeadLetters({ id, since })).retried).toBe(1);
    await waitUntil(async () => {
      const page = await grpc.listWebhookDeliveries({ endpointId: id, state: WebhookDeliveryState.SUCCEEDED });
      return page.items.length === 2 ? true : undefined;
    }, "both retried deliveries to succeed");

    const rotated = await grpc.rotateWebhookSecret({ id });
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.endpoint?.previousSecretExpiresAt).toBeDefined();
    expect(await grpc.deleteWebhookEndpoint({ id })).toMatchObject({ id });
    expect(await codeOf(grpc.getWebhookEndpoint({ id }))).toBe("NOT_FOUND");
    expect(await codeOf(grpc.createWebhookEndpoint({ url: "https://10.9.8.7/", events: ["sent"] }))).toBe("WEBHOOK_HOST_NOT_ALLOWED");
  });
});

describe("without the test override", () => {
  let plain: ApiHarness;

  beforeAll(async () => {
    plain = await startApiHarness();
  });
  afterAll(async () => plain?.close());

  it("refuses loopback and private URLs on save with 400 WEBHOOK_HOST_NOT_ALLOWED", async () => {
    const { secret } = await plain.newCompanyWithKey(["mail.admin"]);
    for (const url of ["https://127.0.0.1:8443/hook", "https://localhost/hook", "https://[::1]/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest"]) {
      const response = await plain.fetch("/mail/v1/webhooks", {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ url, events: ["sent"] }),
      });
      expect(response.status, url).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code, url).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    }
  });
});
