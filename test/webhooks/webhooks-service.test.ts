import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, createRouterTransport, type Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/capabilities/accounts/principal.ts";
import { apiErrorFrom } from "../../src/contract/api-error.ts";
import { operationsOf } from "../../src/contract/routes.ts";
import { WebhookDeliveryState, WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { kCaller } from "../../src/transport/connect/context.ts";
import { errorsInterceptor } from "../../src/transport/connect/errors-interceptor.ts";
import { webhooksServiceImpl } from "../../src/transport/connect/webhooks/index.ts";
import { openWebhooksHarness, type WebhooksHarness } from "./harness.ts";
import { PostgresLiveEventFeed } from "../../src/adapters/postgres/webhooks/live-event-feed.ts";
import { PostgresTestEventRecorder } from "../../src/adapters/postgres/webhooks/index.ts";
import { LiveEvents } from "../../src/capabilities/webhooks/index.ts";

/**
 * The WebhooksService handlers over an in-process Connect transport, on the
 * capability and PostgreSQL: the contract's messages to and from the
 * capability, and what the contract declares (routes, scope, statuses).
 * The caller's company is set the way the auth interceptor sets it; errors
 * go through the server's errors interceptor.
 */
let h: WebhooksHarness;
let feed: PostgresLiveEventFeed;
let live: LiveEvents;
let companyA: string;
let companyB: string;

function clientFor(companyId: string): Client<typeof WebhooksService> {
  const caller: Principal = {
    actor: { kind: "key" },
    keyId: "k",
    keyName: "test",
    keyPrefix: "tml_test",
    scopes: ["mail.admin"],
    expiresAt: null,
    companyId,
    companyName: "test",
    entitlements: { api: true, smtp: false },
  };
  const asCaller: Interceptor = (next) => (req) => {
    req.contextValues.set(kCaller, caller);
    return next(req);
  };
  const transport = createRouterTransport(
    (router) => router.service(WebhooksService, webhooksServiceImpl({ endpoints: h.webhooks.endpoints, deliveries: h.webhooks.deliveries, testEvents: h.webhooks.testEvents, live })),
    // The server's own error mapping (ApiError -> status + ErrorInfo), outermost as there.
    { router: { interceptors: [errorsInterceptor({ error: (details, message) => console.error(message, details) }), asCaller] } },
  );
  return createClient(WebhooksService, transport);
}

async function codeOf(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
    return "resolved";
  } catch (error) {
    return apiErrorFrom(error)?.code;
  }
}

beforeAll(async () => {
  h = await openWebhooksHarness();
  feed = new PostgresLiveEventFeed({ db: h.pool, log: { warn: (details, message) => console.warn(message, details) } });
  live = new LiveEvents({ feed, recorder: new PostgresTestEventRecorder(h.pool) });
  companyA = await h.newCompany("A");
  companyB = await h.newCompany("B");
  h.dns.set("private.example.com", ["192.168.0.10"]);
});

afterAll(async () => {
  await feed?.close();
  await h?.close();
});

describe("the contract of the WebhooksService", () => {
  it("routes every RPC but the event stream under /mail/v1/webhooks with the mail.admin scope; create answers 201", () => {
    const all = operationsOf(WebhooksService);
    expect(all).toHaveLength(13);
    // A server stream has no JSON route: gRPC and Connect only.
    const streams = all.filter((op) => op.method.methodKind === "server_streaming");
    expect(streams.map((op) => [op.method.name, op.scope, op.http])).toEqual([["StreamEvents", "mail.admin", undefined]]);
    const ops = all.filter((op) => op.method.methodKind === "unary");
    for (const op of ops) {
      expect(op.scope, op.method.name).toBe("mail.admin");
      expect(op.http?.pathTemplate.startsWith("/mail/v1/webhooks"), op.method.name).toBe(true);
    }
    const routes = Object.fromEntries(ops.map((op) => [op.method.name, `${op.http?.verb} ${op.http?.pathTemplate} ${op.successStatus}`]));
    expect(routes).toEqual({
      CreateWebhookEndpoint: "post /mail/v1/webhooks 201",
      ListWebhookEndpoints: "get /mail/v1/webhooks 200",
      GetWebhookEndpoint: "get /mail/v1/webhooks/{id} 200",
      UpdateWebhookEndpoint: "patch /mail/v1/webhooks/{id} 200",
      DeleteWebhookEndpoint: "delete /mail/v1/webhooks/{id} 200",
      RotateWebhookSecret: "post /mail/v1/webhooks/{id}/rotate-secret 200",
      ListWebhookDeliveries: "get /mail/v1/webhooks/deliveries 200",
      GetWebhookDelivery: "get /mail/v1/webhooks/deliveries/{id} 200",
      RetryWebhookDelivery: "post /mail/v1/webhooks/deliveries/{id}/retry 200",
      RetryWebhookDeadLetters: "post /mail/v1/webhooks/{id}/retry-dead-letters 200",
      SendTestWebhookEvent: "post /mail/v1/webhooks/{id}/test 200",
      TriggerWebhookEvent: "post /mail/v1/webhooks/test-events 202",
    });
  });
});

describe("the WebhooksService handlers", () => {
  it("create, get, list, update, rotate and delete an endpoint; the secret only in create and rotate", async () => {
    const client = clientFor(companyA);
    const created = await client.createWebhookEndpoint({ url: "https://hooks.example.com/in", description: "Orders", events: ["sent", "delivered"] });
    expect(created.secret).toMatch(/^whsec_/);
    const id = created.endpoint?.id ?? "";
    expect(created.endpoint).toMatchObject({ url: "https://hooks.example.com/in", description: "Orders", events: ["sent", "delivered"], enabled: true });
    expect(created.endpoint?.previousSecretExpiresAt).toBeUndefined();

    const got = await client.getWebhookEndpoint({ id });
    expect(got.endpoint?.id).toBe(id);
    expect(JSON.stringify(got, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value))).not.toContain(created.secret);
    expect((await client.listWebhookEndpoints({})).items.map((e) => e.id)).toContain(id);

    const updated = await client.updateWebhookEndpoint({ id, enabled: false, events: [] });
    expect(updated.endpoint).toMatchObject({ enabled: false, events: ["sent", "delivered"], description: "Orders" });
    const cleared = await client.updateWebhookEndpoint({ id, description: "" });
    expect(cleared.endpoint?.description).toBeUndefined();

    const rotated = await client.rotateWebhookSecret({ id });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    const overlapEnds = timestampDate(rotated.endpoint?.previousSecretExpiresAt ?? timestampFromDate(new Date(0)));
    expect(overlapEnds.getTime()).toBeGreaterThan(Date.now() + 23.9 * 3_600_000);

    expect(await codeOf(clientFor(companyB).getWebhookEndpoint({ id }))).toBe("NOT_FOUND");
    expect(await client.deleteWebhookEndpoint({ id })).toMatchObject({ id });
    expect(await codeOf(client.getWebhookEndpoint({ id }))).toBe("NOT_FOUND");
  });

  it("answers WEBHOOK_HOST_NOT_ALLOWED for a private host and VALIDATION_ERROR for bad input", async () => {
    const client = clientFor(companyA);
    expect(await codeOf(client.createWebhookEndpoint({ url: "https://private.example.com/", events: ["sent"] }))).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    expect(await codeOf(client.createWebhookEndpoint({ url: "https://[::1]/", events: ["sent"] }))).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    expect(await codeOf(client.createWebhookEndpoint({ url: "http://hooks.example.com/", events: ["sent"] }))).toBe("VALIDATION_ERROR");
    expect(await codeOf(client.createWebhookEndpoint({ url: "https://hooks.example.com/", events: ["nope"] }))).toBe("VALIDATION_ERROR");
  });

  it("lists deliveries with filters, shows one with its attempts, and retries dead letters", async () => {
    const client = clientFor(companyA);
    const { endpoint } = await client.createWebhookEndpoint({ url: "https://hooks.example.com/d", events: ["bounced"] });
    const endpointId = endpoint?.id ?? "";
    for (let i = 0; i < 3; i++) await h.recordEvent(companyA, "bounced");
    while ((await h.outbox.fanOut(100)) > 0);

    const page = await client.listWebhookDeliveries({ endpointId, limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).toBeDefined();
    const rest = await client.listWebhookDeliveries({ endpointId, limit: 2, cursor: page.nextCursor });
    expect(rest.items).toHaveLength(1);
    expect(rest.nextCursor).toBeUndefined();
    const first = page.items[0];
    expect(first).toMatchObject({ endpointId, event: "bounced", state: WebhookDeliveryState.PENDING, attemptCount: 0 });
    expect(first?.lastStatus).toBeUndefined();

    const id = first?.id ?? "";
    await h.db.query(
      `update webhook_delivery set state = 'dead_letter', attempt_count = 1, last_status = 500, last_attempt_at = now() where id = $1`,
      [id],
    );
    await h.db.query(
      `insert into webhook_attempt (delivery_id, company_id, number, attempted_at, duration_ms, status, error_class)
       values ($1, $2, 1, now(), 12, 500, null)`,
      [id, companyA],
    );
    const dead = await client.listWebhookDeliveries({ state: WebhookDeliveryState.DEAD_LETTER });
    expect(dead.items.map((d) => d.id)).toEqual([id]);
    const detail = await client.getWebhookDelivery({ id });
    expect(detail.delivery).toMatchObject({ id, state: WebhookDeliveryState.DEAD_LETTER, attemptCount: 1, lastStatus: 500 });
    expect(detail.attempts.map((a) => [a.number, a.status, a.durationMs, a.error])).toEqual([[1, 500, 12, undefined]]);

    expect((await client.retryWebhookDelivery({ id })).delivery?.state).toBe(WebhookDeliveryState.ATTEMPTING);
    expect(await codeOf(client.retryWebhookDelivery({ id }))).toBe("VALIDATION_ERROR");
    expect(await codeOf(clientFor(companyB).getWebhookDelivery({ id }))).toBe("NOT_FOUND");

    await h.db.query(`update webhook_delivery set state = 'dead_letter' where endpoint_id = $1`, [endpointId]);
    const since = timestampFromDate(new Date(Date.now() - 3_600_000));
    expect((await client.retryWebhookDeadLetters({ id: endpointId, since })).retried).toBe(3);
    expect(await codeOf(client.retryWebhookDeadLetters({ id: endpointId }))).toBe("VALIDATION_ERROR");
  });
});
