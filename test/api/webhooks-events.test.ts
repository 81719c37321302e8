import { randomUUID } from "node:crypto";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorFrom } from "../../src/contract/api-error.ts";
import { WEBHOOK_EVENT_NAMES } from "../../src/capabilities/webhooks/index.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  type CampaignRecipientEventSchema,
  type CampaignSentEventSchema,
  EventsService,
  type OrderEventSchema,
} from "../../src/gen/mail/v1/events_pb.js";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type DeliveryBody, type RoutedReceiver, startRoutedReceiver, verifiedBody, waitUntil, loopbackDelivery } from "../webhooks/api-support.ts";

/**
 * The EventsService, the internal door through which the campaign sender
 * and store connections publish events: operator token only, gRPC/Connect
 * only, validated per kind, idempotent on the caller's event id, and
 * delivered, signed, like every other event. Together with a real send
 * (message.accepted) and the outbox rows the contacts and conversions
 * capabilities write, all 16 event kinds reach a receiver.
 */
let h: SendingHarness;
let hooks: RoutedReceiver;
let sender: ReadySender;
let endpointSecret: string;
let events: Client<typeof EventsService>;

function withToken(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

beforeAll(async () => {
  hooks = await startRoutedReceiver();
  h = await startSendingHarness({}, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate) });
  sender = await h.readySender({ credits: 5 });
  const created = await h.forCompany(WebhooksService, sender.companyId).createWebhookEndpoint({ url: hooks.urlFor("/all"), events: [...WEBHOOK_EVENT_NAMES] });
  endpointSecret = created.secret;
  events = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [withToken(OPERATOR_TOKEN)] }));
});
afterAll(async () => {
  await h?.close();
  await hooks?.close();
});

/** A PublishEventRequest as the tests write it. */
interface Publish {
  companyId: string;
  eventId?: string;
  event: string;
  occurredAt?: Timestamp;
  data:
    | { case: "campaign"; value: MessageInitShape<typeof CampaignRecipientEventSchema> }
    | { case: "campaignSent"; value: MessageInitShape<typeof CampaignSentEventSchema> }
    | { case: "order"; value: MessageInitShape<typeof OrderEventSchema> }
    | { case: undefined; value?: undefined };
}

const OCCURRED = new Date("2025-11-20T08:30:00.000Z");
const campaign = { campaignId: "cmp_42", recipientId: "rcp_7", contactId: "ct_9", email: "ada@example.com" };

function publishing(event: string, data: Publish["data"], extra: Partial<Publish> = {}): Publish {
  return { companyId: sender.companyId, eventId: randomUUID(), event, occurredAt: timestampFromDate(OCCURRED), data, ...extra };
}

async function codeAndMessage(promise: Promise<unknown>): Promise<{ code: string | undefined; message: string }> {
  try {
    await promise;
    return { code: "resolved", message: "" };
  } catch (error) {
    const known = apiErrorFrom(error);
    return { code: known?.code, message: known?.message ?? String(error) };
  }
}

function received(event: string): DeliveryBody[] {
  return hooks.on("/all").map((r) => verifiedBody(r, endpointSecret)).filter((b) => b.event === event);
}

describe("publishing events", () => {
  const CAMPAIGN_KEYS = ["campaignId", "contactId", "email", "occurredAt", "recipientId"];
  const cases: Array<{ event: string; data: Publish["data"]; keys: string[]; expected: Record<string, unknown> }> = [
    ...["sent", "delivered", "bounced", "complaint", "failed", "opened", "unsubscribed"].map((event) => ({
      event,
      data: { case: "campaign" as const, value: campaign },
      keys: CAMPAIGN_KEYS,
      expected: { ...campaign, occurredAt: OCCURRED.toISOString() },
    })),
    {
      event: "clicked",
      data: { case: "campaign", value: { ...campaign, linkId: "lnk_1" } },
      keys: [...CAMPAIGN_KEYS, "linkId"].sort(),
      expected: { ...campaign, linkId: "lnk_1" },
    },
    {
      event: "campaign.click",
      data: { case: "campaign", value: { ...campaign, linkId: "lnk_2", suspect: true } },
      keys: [...CAMPAIGN_KEYS, "linkId", "suspect"].sort(),
      expected: { linkId: "lnk_2", suspect: true },
    },
    {
      event: "campaign.sent",
      data: { case: "campaignSent", value: { campaignId: "cmp_42", accepted: 120n, failed: 2n, suppressed: 3n, skipped: 4n, unknown: 0n } },
      keys: ["accepted", "campaignId", "failed", "occurredAt", "skipped", "suppressed", "unknown"],
      expected: { campaignId: "cmp_42", accepted: 120, failed: 2, suppressed: 3, skipped: 4, unknown: 0, occurredAt: OCCURRED.toISOString() },
    },
    ...["order.event", "order.created", "order.paid"].map((event) => ({
      event,
      data: { case: "order" as const, value: { integrationId: "int_5", provider: "woocommerce", order: { id: 1001, total: "49.90", lines: [{ sku: "A" }] } } },
      keys: ["integrationId", "order", "provider"],
      expected: { integrationId: "int_5", provider: "woocommerce", order: { id: 1001, total: "49.90", lines: [{ sku: "A" }] } },
    })),
  ];

  it("delivers every publishable kind with exactly the spec's data fields", async () => {
    for (const { event, data } of cases) {
      const published = await events.publishEvent(publishing(event, data));
      expect(published.replayed, event).toBe(false);
      expect(published.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    await waitUntil(async () => (cases.every((c) => received(c.event).length >= 1) ? true : undefined), "every published kind");
    for (const { event, keys, expected } of cases) {
      const [body] = received(event);
      expect(Object.keys(body?.data ?? {}).sort(), event).toEqual(keys);
      expect(body?.data, event).toMatchObject(expected);
      expect(body?.occurredAt, event).toBe(OCCURRED.toISOString());
    }
  });

  it("delivers the three kinds the service writes itself too: all 16 kinds reach the receiver", async () => {
    // message.accepted from a send, contact.updated from a contact write, conversion.recorded from a conversion.
    const response = await h.send(sender.secret, { to: "delivered@kinds.example", subject: "Hi", html: "<p>x</p>" });
    const { id: messageId } = (await response.json()) as { id: string };
    const { secret: key } = await h.newKey(sender.companyId, ["mail.contacts.write", "mail.conversions.write"], "store");
    const post = (path: string, body: unknown) =>
      h.fetch(path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const contact = await post("/mail/v1/contacts", { email: "grace@kinds.example", firstName: "Grace" });
    expect(contact.status, await contact.clone().text()).toBe(200);
    const conversion = await post("/mail/v1/conversions", { eventId: "order-16", eventType: "purchase", email: "grace@kinds.example", revenue: 25, currency: "EUR" });
    expect(conversion.status, await conversion.clone().text()).toBe(202);

    await waitUntil(async () => (WEBHOOK_EVENT_NAMES.every((name) => received(name).length >= 1) ? true : undefined), "all 16 kinds", 60_000);
    expect(WEBHOOK_EVENT_NAMES).toHaveLength(16);
    expect(received("message.accepted").some((b) => b.data.messageId === messageId)).toBe(true);
    expect(received("contact.updated").some((b) => b.data.email === "grace@kinds.example" && b.data.change === "created")).toBe(true);
    expect(received("conversion.recorded")).toHaveLength(1);
  });

  it("is idempotent on the caller's event id; the same id with another event is a conflict", async () => {
    const request = publishing("opened", { case: "campaign", value: { ...campaign, recipientId: "rcp_idem" } });
    const first = await events.publishEvent(request);
    const again = await events.publishEvent(request);
    expect(again).toMatchObject({ id: first.id, replayed: true });
    const other = await codeAndMessage(events.publishEvent({ ...request, data: { case: "campaign", value: { ...campaign, recipientId: "rcp_other" } } }));
    expect(other.code).toBe("IDEMPOTENCY_CONFLICT");

    await waitUntil(async () => (received("opened").some((b) => b.data.recipientId === "rcp_idem") ? true : undefined), "the opened event");
    // Give a second delivery every chance to show up before counting.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(received("opened").filter((b) => b.data.recipientId === "rcp_idem")).toHaveLength(1);
    const rows = await h.db.query(`select 1 from webhook_delivery where event_id = $1`, [first.id]);
    expect(rows.rowCount).toBe(1);

    // Another company may use the same id for its own event.
    const { companyId } = await h.newCompanyWithKey(["mail.admin"], "Same Ids Co");
    const theirs = await events.publishEvent({ ...request, companyId });
    expect(theirs.replayed).toBe(false);
    expect(theirs.id).not.toBe(first.id);
  });

  it("answers 400 VALIDATION_ERROR naming each bad field, per kind", async () => {
    const clicked = await codeAndMessage(
      events.publishEvent(publishing("clicked", { case: "campaign", value: { campaignId: "c", recipientId: "r", contactId: "", email: "not-an-address" } })),
    );
    expect(clicked.code).toBe("VALIDATION_ERROR");
    for (const field of ["campaign.contactId", "campaign.email", "campaign.linkId"]) expect(clicked.message).toContain(field);

    const opened = await codeAndMessage(events.publishEvent(publishing("opened", { case: "campaign", value: { ...campaign, linkId: "l", suspect: false } })));
    expect(opened.message).toContain("campaign.linkId: is only for clicked and campaign.click");
    expect(opened.message).toContain("campaign.suspect");

    const click = await codeAndMessage(events.publishEvent(publishing("campaign.click", { case: "campaign", value: { ...campaign, linkId: "l" } })));
    expect(click.message).toContain("campaign.suspect: is required for campaign.click");

    const sent = await codeAndMessage(
      events.publishEvent(publishing("campaign.sent", { case: "campaignSent", value: { campaignId: "", accepted: -1n, failed: 0n, suppressed: 0n, skipped: 2n ** 60n, unknown: 0n } })),
    );
    for (const field of ["campaignSent.campaignId", "campaignSent.accepted", "campaignSent.skipped"]) expect(sent.message).toContain(field);
    expect(sent.message).not.toContain("campaignSent.failed");

    const order = await codeAndMessage(events.publishEvent(publishing("order.paid", { case: "order", value: { integrationId: "i", provider: "" } })));
    expect(order.message).toContain("order.provider: is required");
    expect(order.message).toContain("order.order: is required");

    const mismatch = await codeAndMessage(events.publishEvent(publishing("opened", { case: "order", value: { integrationId: "i", provider: "p", order: {} } })));
    expect(mismatch.message).toContain("order: is not the data of opened");
    expect(mismatch.message).toContain("campaign: is required for opened");

    const own = await codeAndMessage(events.publishEvent(publishing("contact.updated", { case: undefined })));
    expect(own.message).toContain("event: contact.updated is recorded by the service itself");
    const unknown = await codeAndMessage(events.publishEvent(publishing("campaign.opened", { case: "campaign", value: campaign })));
    expect(unknown.message).toContain("event: is not an event name");

    const missing = await codeAndMessage(events.publishEvent({ companyId: sender.companyId, event: "opened", data: { case: "campaign", value: campaign } }));
    expect(missing.code).toBe("VALIDATION_ERROR");
    expect(missing.message).toContain("eventId: is required");
    expect(missing.message).toContain("occurredAt: is required");

    const nobody = await codeAndMessage(events.publishEvent(publishing("opened", { case: "campaign", value: campaign }, { companyId: randomUUID() })));
    expect(nobody.code).toBe("NOT_FOUND");
  });

  it("delivers a company's events only to that company's endpoints", async () => {
    const other = await h.newCompanyWithKey(["mail.admin"], "Neighbour Co");
    await h.forCompany(WebhooksService, other.companyId).createWebhookEndpoint({ url: hooks.urlFor("/neighbour"), events: ["unsubscribed"] });
    await events.publishEvent(publishing("unsubscribed", { case: "campaign", value: { ...campaign, recipientId: "rcp_private" } }));
    await waitUntil(async () => (received("unsubscribed").some((b) => b.data.recipientId === "rcp_private") ? true : undefined), "the company's own delivery");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(hooks.on("/neighbour")).toEqual([]);
  });
});

describe("the EventsService door", () => {
  it("takes the operator token only, never an API key", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.admin"], "Key Holder Co");
    const withKey = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [withToken(secret)] }));
    expect((await codeAndMessage(withKey.publishEvent(publishing("opened", { case: "campaign", value: campaign })))).code).toBe("FORBIDDEN");
    const anonymous = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    expect((await codeAndMessage(anonymous.publishEvent(publishing("opened", { case: "campaign", value: campaign })))).code).toBe("AUTHENTICATION_REQUIRED");
  });

  it("is served over gRPC too", async () => {
    const grpc = createClient(EventsService, createGrpcTransport({ baseUrl: h.app.operatorUrl, interceptors: [withToken(OPERATOR_TOKEN)] }));
    const published = await grpc.publishEvent(publishing("order.created", { case: "order", value: { integrationId: "int_g", provider: "shopify", order: { id: "g-1" } } }));
    expect(published.replayed).toBe(false);
    await waitUntil(async () => (received("order.created").some((b) => b.data.integrationId === "int_g") ? true : undefined), "the order over gRPC");
  });

  it("has no JSON route and is not in the OpenAPI document", async () => {
    for (const path of ["/mail/v1/events", "/mail/v1/events:publish", "/mail/v1/publish-event"]) {
      const response = await h.fetch(path, { method: "POST", headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" }, body: "{}" });
      expect(response.status, path).toBe(404);
    }
    // Nor on the public listeners at all: the operator listener serves it.
    const connect = await h.fetch("/mail.v1.EventsService/PublishEvent", {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(connect.status).toBe(404);
    const document = (await (await h.fetch("/mail/v1/openapi.json")).json()) as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
    // (Other services' paths may say "event", e.g. the audit log's /mail/v1/audit-events.)
    expect(Object.keys(document.paths).filter((p) => /^\/mail\/v1\/(events|publish)/.test(p))).toEqual([]);
    expect(Object.keys(document.components.schemas).filter((name) => /Publish|CampaignSent|OrderEvent|CampaignRecipient/.test(name))).toEqual([]);
  });
});
