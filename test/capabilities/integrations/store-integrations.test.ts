import { randomUUID } from "node:crypto";
import { fromJson } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresStoreIntegrationStore } from "../../../src/adapters/postgres/integrations/index.ts";
import type { StoreIntegrations, StoreOrderInput } from "../../../src/capabilities/integrations/index.ts";
import { type OrderDecision, validateOrder } from "../../../src/capabilities/integrations/order-rules.ts";
import type { OrderEventDraft, OrderRecordRequest, StoreIntegrationStore } from "../../../src/capabilities/integrations/ports.ts";
import type { StoreOrder } from "../../../src/capabilities/integrations/types.ts";
import type { AuthenticatedKey } from "../../../src/capabilities/accounts/types.ts";
import { IntegrationsService, PushOrderRequestSchema } from "../../../src/gen/mail/v1/integrations_pb.js";
import { kCaller } from "../../../src/transport/connect/context.ts";
import { integrationsServiceImpl } from "../../../src/transport/connect/integrations/index.ts";
import { createIntegrationsCapability } from "../../../src/wiring/integrations.ts";
import { apiErrorOf, fieldsNamed, openContactsHarness, type ContactsHarness } from "../contacts/harness.ts";

function order(overrides: Partial<StoreOrderInput> = {}): StoreOrderInput {
  return {
    id: "727",
    status: "pending",
    currency: "eur",
    total: "29.35",
    lineItems: [{ name: "Woo Single #1", quantity: 2, total: "6.00", sku: "WS-1" }],
    billing: { email: "John.Doe@Example.com", firstName: "John", lastName: "Doe" },
    dateCreated: "2026-11-20T10:07:04",
    datePaid: "",
    ...overrides,
  };
}

let h: ContactsHarness;

beforeAll(async () => {
  h = await openContactsHarness();
});
afterAll(async () => h?.close());

const orderEvents = async (companyId: string) => (await h.events(companyId)).filter((e) => e.event.startsWith("order."));

describe("store integrations (IntegrationsService: ConnectStore, PushOrder)", () => {
  let integrations: StoreIntegrations;

  beforeAll(() => {
    integrations = createIntegrationsCapability(h.orm, { contacts: h.contacts, clock: h.clock.now });
  });

  /** The order events of each push, oldest push first (the rows of one push share its time; their order within it is not stated). */
  const eventsByPush = async (companyId: string): Promise<string[][]> => {
    const pushes = new Map<number, string[]>();
    for (const e of await orderEvents(companyId)) pushes.set(e.occurredAt.getTime(), [...(pushes.get(e.occurredAt.getTime()) ?? []), e.event]);
    return [...pushes.values()].map((events) => events.sort());
  };

  it("connects a shop once per site", async () => {
    const companyId = await h.newCompany();
    const first = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://Shop.Example.com/" });
    expect(first).toMatchObject({ created: true, integration: { provider: "woocommerce", siteUrl: "https://shop.example.com" } });
    const again = await integrations.connect({ companyId, provider: "WooCommerce", siteUrl: "https://shop.example.com" });
    expect(again).toEqual({ created: false, integration: first.integration });
    expect(await fieldsNamed(integrations.connect({ companyId, provider: "shopify", siteUrl: "ftp://x" }))).toEqual(["provider", "siteUrl"]);
  });

  it("records an order once, syncs its customer as a pending contact and writes order.event + order.created", async () => {
    const companyId = await h.newCompany();
    const { integration } = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    const answer = await integrations.pushOrder({ companyId, integrationId: integration.id, order: order() });
    expect(answer).toMatchObject({ created: true, changed: true, paid: false });
    const contact = await h.contacts.get({ companyId, idOrEmail: "john.doe@example.com" });
    expect(contact).toMatchObject({ id: answer.contactId, status: "pending", firstName: "John", lastName: "Doe" });

    expect(await eventsByPush(companyId)).toEqual([["order.created", "order.event"]]);
    const events = await orderEvents(companyId);
    expect(events[1]?.data).toEqual(events[0]?.data);
    expect(events[0]?.data).toEqual({
      integrationId: integration.id,
      provider: "woocommerce",
      order: {
        id: "727",
        status: "pending",
        currency: "EUR",
        total: "29.35",
        lineItems: [{ name: "Woo Single #1", quantity: 2, total: "6.00", sku: "WS-1" }],
        billing: { email: "John.Doe@Example.com", firstName: "John", lastName: "Doe" },
        dateCreated: "2026-11-20T10:07:04",
        datePaid: null,
      },
    });

    // The same order pushed again (a webhook retry) changes nothing and writes nothing.
    expect(await integrations.pushOrder({ companyId, integrationId: integration.id, order: order() })).toMatchObject({ created: false, changed: false, paid: false });
    expect(await orderEvents(companyId)).toHaveLength(2);
  });

  it("writes order.paid once, in the push where the order becomes paid", async () => {
    const companyId = await h.newCompany();
    const { integration } = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    await integrations.pushOrder({ companyId, integrationId: integration.id, order: order() });
    const paid = order({ status: "processing", datePaid: "2026-11-20T10:09:00" });
    expect(await integrations.pushOrder({ companyId, integrationId: integration.id, order: paid })).toMatchObject({ created: false, changed: true, paid: true });
    await integrations.pushOrder({ companyId, integrationId: integration.id, order: paid });
    expect(await integrations.pushOrder({ companyId, integrationId: integration.id, order: order({ status: "completed", datePaid: "2026-11-20T10:09:00" }) })).toMatchObject({
      changed: true,
      paid: true,
    });
    expect(await eventsByPush(companyId)).toEqual([["order.created", "order.event"], ["order.event", "order.paid"], ["order.event"]]);

    // An order paid at its first push: created and paid together.
    await integrations.pushOrder({ companyId, integrationId: integration.id, order: order({ id: "728", status: "completed" }) });
    expect((await eventsByPush(companyId)).at(-1)).toEqual(["order.created", "order.event", "order.paid"]);
  });

  it("records concurrent pushes of one order once", async () => {
    const companyId = await h.newCompany();
    const { integration } = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    const answers = await Promise.all(Array.from({ length: 6 }, () => integrations.pushOrder({ companyId, integrationId: integration.id, order: order({ id: "900" }) })));
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    expect(await eventsByPush(companyId)).toEqual([["order.created", "order.event"]]);
    const { rows } = await h.db.query(`select count(*)::int as n from store_order where company_id = $1`, [companyId]);
    expect(rows[0]).toEqual({ n: 1 });
  });

  it("never overwrites a protected contact status", async () => {
    const companyId = await h.newCompany();
    const { integration } = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    await h.contacts.upsert({ companyId, email: "john.doe@example.com", status: "unsubscribed" });
    await integrations.pushOrder({ companyId, integrationId: integration.id, order: order() });
    expect((await h.contacts.get({ companyId, idOrEmail: "john.doe@example.com" })).status).toBe("unsubscribed");
  });

  it("names the integration as the source of the contact changes it makes, whatever the status it keeps", async () => {
    const companyId = await h.newCompany();
    const { integration } = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    const source = `integration:${integration.id}`;
    const contactEvents = async () => (await h.events(companyId)).filter((e) => e.event === "contact.updated").map((e) => e.data);

    // A new customer: created by the integration, pending.
    const first = await integrations.pushOrder({ companyId, integrationId: integration.id, order: order() });
    expect(await contactEvents()).toEqual([
      { contactId: first.contactId, email: "John.Doe@example.com", status: "pending", source, change: "created", occurredAt: expect.any(String) },
    ]);
    // The same customer again, nothing new about them: no contact event.
    await integrations.pushOrder({ companyId, integrationId: integration.id, order: order({ id: "728" }) });
    expect(await contactEvents()).toHaveLength(1);

    // Each protected status stays; the names the order brings are still written, by the integration.
    for (const [i, status] of (["unsubscribed", "suppressed", "bounced", "complained"] as const).entries()) {
      const email = `kept-${status}@example.com`;
      if (status === "unsubscribed") await h.contacts.upsert({ companyId, email, status });
      else {
        await h.contacts.upsert({ companyId, email });
        await h.contacts.markFromSuppression({ companyId, email, reason: status === "suppressed" ? "manual" : status === "bounced" ? "bounce" : "complaint" });
      }
      const pushed = await integrations.pushOrder({ companyId, integrationId: integration.id, order: order({ id: String(800 + i), billing: { email, firstName: "Kept", lastName: status } }) });
      expect(await h.contacts.get({ companyId, idOrEmail: email })).toMatchObject({ status, firstName: "Kept", lastName: status });
      expect((await contactEvents()).at(-1)).toMatchObject({ contactId: pushed.contactId, status, source, change: "updated" });
    }
    // Writes through the API keep saying `api`.
    await h.contacts.upsert({ companyId, email: "api@example.com" });
    expect((await contactEvents()).at(-1)).toMatchObject({ email: "api@example.com", source: "api" });
  });

  it("keeps tenants apart: another company's integration is NOT_FOUND", async () => {
    const mine = await h.newCompany();
    const theirs = await h.newCompany();
    const { integration } = await integrations.connect({ companyId: theirs, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    await apiErrorOf(integrations.pushOrder({ companyId: mine, integrationId: integration.id, order: order() }), "NOT_FOUND");
    await apiErrorOf(integrations.pushOrder({ companyId: mine, integrationId: "not-a-uuid", order: order() }), "NOT_FOUND");
    expect(await orderEvents(mine)).toEqual([]);
    await expect(h.contacts.get({ companyId: mine, idOrEmail: "john.doe@example.com" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    // The same site connected by two companies is two integrations.
    expect((await integrations.connect({ companyId: mine, provider: "woocommerce", siteUrl: "https://shop.example.com" })).integration.id).not.toBe(integration.id);
  });

  it("names every bad field of an order, writing nothing", async () => {
    const companyId = await h.newCompany();
    const { integration } = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    expect(
      await fieldsNamed(
        integrations.pushOrder({ companyId, integrationId: integration.id, order: order({ id: "0", currency: "euro", total: "1,5", datePaid: "yesterday", lineItems: [{ name: "x", quantity: -1, total: "", sku: "" }] }) }),
      ),
    ).toEqual(["order.id", "order.currency", "order.total", "order.line_items[0].total", "order.line_items[0].quantity", "order.date_paid"]);
    expect(await orderEvents(companyId)).toEqual([]);
  });

  it("takes WooCommerce's webhook body as the plugin sends it (snake_case JSON)", async () => {
    const companyId = await h.newCompany();
    const { integration } = await integrations.connect({ companyId, provider: "woocommerce", siteUrl: "https://shop.example.com" });
    const request = fromJson(PushOrderRequestSchema, {
      integration_id: integration.id,
      order: {
        id: 1042,
        status: "processing",
        currency: "USD",
        total: "18.00",
        line_items: [{ name: "Mug", quantity: 1, total: "18.00", sku: "MUG" }],
        billing: { email: "ann@example.com", first_name: "Ann", last_name: "Lee" },
        date_created: "2026-11-21T09:00:00",
        date_paid: "2026-11-21T09:01:00",
      },
    }, { ignoreUnknownFields: true });
    const ctx = createHandlerContext({
      service: IntegrationsService,
      method: IntegrationsService.method.pushOrder,
      protocolName: "connect",
      requestMethod: "POST",
      url: "http://x/",
      contextValues: createContextValues().set(kCaller, { companyId } as unknown as AuthenticatedKey),
    });
    const answer = await integrationsServiceImpl(integrations).pushOrder(request, ctx);
    expect(answer).toMatchObject({ created: true, changed: true, paid: true });
    expect((await h.contacts.get({ companyId, idOrEmail: "ann@example.com" })).firstName).toBe("Ann");
    const created = (await orderEvents(companyId)).find((e) => e.event === "order.created");
    expect(created?.data).toMatchObject({ order: { id: "1042", lineItems: [{ name: "Mug", quantity: 1, total: "18.00", sku: "MUG" }] } });
  });
});

const CHANGED: OrderDecision = { created: false, changed: true, becamePaid: false, paid: false };
const UNCHANGED: OrderDecision = { created: false, changed: false, becamePaid: false, paid: false };

/** A store_order row as the tests read it back; `changed`: updated after it was created. */
interface StoredOrderRow {
  status: string;
  paid: boolean;
  payload: StoreOrder;
  contact_id: string | null;
  version: number;
  changed: boolean;
}

/** One `order.event` outbox row per decision, keyed by the order and its version. */
function eventsOf(decision: OrderDecision, orderKey: string, version: number): OrderEventDraft[] {
  return [{ event: "order.event", occurredAt: new Date(), data: { orderKey, version, paid: decision.paid }, dedupeKey: `order:${orderKey}:v${version}` }];
}

/**
 * The store integration store on PostgreSQL, through its port: connecting a
 * shop once, finding it only for its company, and recording orders with
 * their outbox rows in one transaction, concurrent pushes one after the other.
 */
describe("the store integration store (PostgreSQL)", () => {
  let store: StoreIntegrationStore;

  beforeAll(() => {
    store = postgresStoreIntegrationStore(h.orm);
  });

  /** An order as the capability hands it to the store. */
  const validated = (overrides: Partial<StoreOrderInput> = {}): StoreOrder => validateOrder(order(overrides));

  async function storedOrders(companyId: string): Promise<StoredOrderRow[]> {
    const { rows } = await h.db.query<StoredOrderRow>(
      `select status, paid, payload, contact_id, version, updated_at > created_at as changed from store_order where company_id = $1 order by store_order_id`,
      [companyId],
    );
    return rows;
  }

  /** The data of the company's order.* outbox rows, oldest first. */
  const orderData = async (companyId: string) => (await orderEvents(companyId)).map((e) => e.data);

  async function connected(companyId: string): Promise<string> {
    return (await store.connect(companyId, "woocommerce", "https://shop.example.com")).integration.id;
  }

  it("connects a (provider, site) once per company and finds it only for that company", async () => {
    const mine = await h.newCompany();
    const theirs = await h.newCompany();
    const first = await store.connect(mine, "woocommerce", "https://shop.example.com");
    expect(first).toEqual({
      created: true,
      integration: { id: expect.any(String), companyId: mine, provider: "woocommerce", siteUrl: "https://shop.example.com", createdAt: expect.any(Date) },
    });
    expect(await store.connect(mine, "woocommerce", "https://shop.example.com")).toEqual({ created: false, integration: first.integration });
    const other = await store.connect(mine, "woocommerce", "https://other.example.com");
    expect(other.created).toBe(true);
    expect(other.integration.id).not.toBe(first.integration.id);
    const ofTheirs = await store.connect(theirs, "woocommerce", "https://shop.example.com");
    expect(ofTheirs).toMatchObject({ created: true, integration: { companyId: theirs } });

    expect(await store.find(mine, first.integration.id)).toEqual(first.integration);
    expect(await store.find(theirs, first.integration.id)).toBeUndefined();
    expect(await store.find(mine, ofTheirs.integration.id)).toBeUndefined();
    expect(await store.find(mine, randomUUID())).toBeUndefined();
    expect(await store.find(mine, "not-a-uuid")).toBeUndefined();
  });

  it("inserts an order, updates it when changed (keeping its contact when none is given) and leaves it when not", async () => {
    const companyId = await h.newCompany();
    const integrationId = await connected(companyId);
    const { contact } = await h.contacts.upsert({ companyId, email: "john@example.com" });
    const seen: StoreOrder[] = [];
    const versions: [string, number][] = [];
    const push = (pushed: StoreOrder, contactId: string | null, decision: OrderDecision) =>
      store.recordOrder({
        companyId,
        integrationId,
        order: pushed,
        contactId,
        decide: (previous) => {
          if (previous) seen.push(previous);
          return previous === undefined ? { created: true, changed: true, becamePaid: false, paid: false } : decision;
        },
        events: (decided, orderKey, version) => {
          versions.push([orderKey, version]);
          return eventsOf(decided, orderKey, version);
        },
      });

    expect(await push(validated(), contact.id, CHANGED)).toEqual({ created: true, changed: true, becamePaid: false, paid: false });
    expect(await storedOrders(companyId)).toEqual([{ status: "pending", paid: false, payload: validated(), contact_id: contact.id, version: 1, changed: false }]);

    const paid = validated({ status: "processing", datePaid: "2026-11-20T10:09:00" });
    expect(await push(paid, null, { ...CHANGED, becamePaid: true, paid: true })).toEqual({ created: false, changed: true, becamePaid: true, paid: true });
    expect(await storedOrders(companyId)).toEqual([{ status: "processing", paid: true, payload: paid, contact_id: contact.id, version: 2, changed: true }]);

    expect(await push(validated({ status: "completed", datePaid: "2026-11-20T10:09:00" }), null, UNCHANGED)).toEqual(UNCHANGED);
    expect(await storedOrders(companyId)).toEqual([{ status: "processing", paid: true, payload: paid, contact_id: contact.id, version: 2, changed: true }]);

    // decide saw the stored order at each later push; events were asked for the changes only, with the new version.
    expect(seen).toEqual([validated(), paid]);
    const orderKey = versions[0]?.[0];
    expect(versions).toEqual([
      [orderKey, 1],
      [orderKey, 2],
    ]);
    expect(await orderData(companyId)).toEqual([
      { orderKey, version: 1, paid: false },
      { orderKey, version: 2, paid: true },
    ]);
  });

  it("commits an order and its outbox rows together, and records an outbox row once per dedupe key", async () => {
    const companyId = await h.newCompany();
    const integrationId = await connected(companyId);
    const request: OrderRecordRequest = {
      companyId,
      integrationId,
      order: validated(),
      contactId: null,
      decide: () => ({ created: true, changed: true, becamePaid: false, paid: false }),
      events: () => {
        throw new Error("no events today");
      },
    };
    await expect(store.recordOrder(request)).rejects.toThrow("no events today");
    expect(await storedOrders(companyId)).toEqual([]);

    const twice = (decision: OrderDecision, orderKey: string, version: number) => [...eventsOf(decision, orderKey, version), ...eventsOf(decision, orderKey, version)];
    await store.recordOrder({ ...request, events: twice });
    await store.recordOrder({ ...request, order: validated({ status: "processing" }), decide: () => CHANGED, events: (decision, orderKey) => twice(decision, orderKey, 1) });
    expect(await storedOrders(companyId)).toMatchObject([{ status: "processing", version: 2 }]);
    expect(await orderData(companyId)).toHaveLength(1);
  });

  it("applies concurrent pushes of one order one after the other", async () => {
    const companyId = await h.newCompany();
    const integrationId = await connected(companyId);
    const pushes = 6;
    const decided: string[] = [];
    const answers = await Promise.all(
      Array.from({ length: pushes }, (_, i) =>
        store.recordOrder({
          companyId,
          integrationId,
          order: validated({ status: `status-${i}` }),
          contactId: null,
          decide: (previous) => {
            if (previous) decided.push(previous.status);
            return previous === undefined ? { created: true, changed: true, becamePaid: false, paid: false } : CHANGED;
          },
          events: eventsOf,
        }),
      ),
    );
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    // Each push but the inserting one saw the order the previous push stored: every stored status once, never a lost update.
    const [last] = await storedOrders(companyId);
    expect(last?.version).toBe(pushes);
    expect(decided).toHaveLength(pushes - 1);
    expect(new Set(decided).size).toBe(pushes - 1);
    expect(decided).not.toContain(last?.status);
    expect((await orderData(companyId)).map((data) => data.version)).toEqual(Array.from({ length: pushes }, (_, i) => i + 1));
  });
});
