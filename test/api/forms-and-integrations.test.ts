import { fromJson } from "@bufbuild/protobuf";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntegrationsService, StoreOrderSchema } from "../../src/gen/mail/v1/integrations_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/**
 * The forms and the store integration as served: GET /mail/v1/forms lists a
 * company's active forms (never another's), the hosted page of a form is
 * served at its url, and the plugin's store endpoints connect a store and
 * take its orders idempotently, emitting order events to the outbox.
 */
describe("forms and the store integration over HTTP", () => {
  let h: ApiHarness;

  beforeAll(async () => {
    h = await startApiHarness();
  });
  afterAll(async () => h?.close());

  it("lists only the company's active forms, and serves each form's hosted page", async () => {
    const mine = await h.newCompanyWithKey(["mail.events.read"]);
    const other = await h.newCompanyWithKey(["mail.events.read"]);
    const field = { name: "email", label: "Email", type: "email", required: true };
    const { form } = await h.forCompany(SignupFormsService, mine.companyId).createForm({
      name: "Newsletter",
      fields: [field],
      consentText: "Yes, send me news.",
      language: "en",
    });
    await h.forCompany(SignupFormsService, other.companyId).createForm({ name: "Theirs", fields: [field], consentText: "x", language: "en" });

    const response = await h.fetch("/mail/v1/forms", bearer(mine.secret));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: Array<{ publicId: string; name: string; url: string; doubleOptIn: boolean }> };
    expect(body.items.map((f) => f.name)).toEqual(["Newsletter"]);
    expect(body.items[0]?.publicId).toBe(form?.publicId);
    expect(body.items[0]?.url).toMatch(new RegExp(`/mail/v1/forms/${form?.publicId}$`));

    const page = await h.fetch(`/mail/v1/forms/${form?.publicId}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("Yes, send me news.");

    await h.forCompany(SignupFormsService, mine.companyId).deactivateForm({ publicId: form?.publicId ?? "" });
    const after = (await (await h.fetch("/mail/v1/forms", bearer(mine.secret))).json()) as { items: unknown[] };
    expect(after.items).toEqual([]);
  });

  it("connects a store and takes its orders once, with order events in the outbox; other scopes are refused", async () => {
    const { secret, companyId } = await h.newCompanyWithKey(["mail.integrations.write"]);
    const json = (body: unknown) => ({ ...bearer(secret, { "content-type": "application/json" }), method: "POST", body: JSON.stringify(body) });
    const connected = await h.fetch("/mail/v1/integrations/stores", json({ provider: "woocommerce", siteUrl: "https://shop.example.com" }));
    expect(connected.status).toBe(201);
    const { integration } = (await connected.json()) as { integration: { id: string } };

    const order = {
      id: 1001,
      status: "processing",
      currency: "EUR",
      total: "49.90",
      line_items: [{ name: "Mug", quantity: 2, total: "49.90", sku: "MUG-1" }],
      billing: { email: "buyer@customer.example", first_name: "Bea", last_name: "Buyer" },
      date_created: "2026-11-20T10:00:00Z",
      date_paid: "2026-11-20T10:01:00Z",
    };
    // The same order again, its 64-bit id once as a decimal string (the proto3 JSON form): recognised as the same order.
    for (const body of [order, { ...order, id: "1001" }]) {
      const pushed = await h.fetch(`/mail/v1/integrations/${integration.id}/orders`, json(body));
      expect(pushed.status).toBe(200);
    }
    const badId = await h.fetch(`/mail/v1/integrations/${integration.id}/orders`, json({ ...order, id: "99999999999999999999" }));
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { error: { message: string } }).error.message).toContain("id");
    const events = await h.db.query<{ event: string }>(
      `select event from webhook_event where company_id = $1 and event like 'order.%' order by event`,
      [companyId],
    );
    expect(events.rows.map((r) => r.event)).toEqual(["order.created", "order.event", "order.paid"]);

    const reader = await h.newCompanyWithKey(["mail.events.read"]);
    const refused = await h.fetch("/mail/v1/integrations/stores", {
      ...bearer(reader.secret, { "content-type": "application/json" }),
      method: "POST",
      body: JSON.stringify({ provider: "woocommerce", siteUrl: "https://x.example.com" }),
    });
    expect(refused.status).toBe(403);
  });

  it("syncs the customer as a contact whose contact.updated events name the integration; a protected status stays (HTTP and gRPC)", async () => {
    const { secret, companyId } = await h.newCompanyWithKey(["mail.integrations.write", "mail.contacts.write", "mail.contacts.read"]);
    const json = (body: unknown) => ({ ...bearer(secret, { "content-type": "application/json" }), method: "POST", body: JSON.stringify(body) });
    const connected = await h.fetch("/mail/v1/integrations/stores", json({ provider: "woocommerce", siteUrl: "https://source.example.com" }));
    const { integration } = (await connected.json()) as { integration: { id: string } };
    const source = `integration:${integration.id}`;
    const order = (id: number, email: string) => ({
      id,
      status: "pending",
      currency: "EUR",
      total: "10.00",
      line_items: [],
      billing: { email, first_name: "Cleo", last_name: "Customer" },
      date_created: "2026-11-20T10:00:00Z",
    });
    const contactEvents = async () =>
      (
        await h.db.query<{ data: { email: string; status: string; source: string; change: string } }>(
          `select data from webhook_event where company_id = $1 and event = 'contact.updated' order by occurred_at, created_at`,
          [companyId],
        )
      ).rows.map((r) => r.data);

    const pushed = await h.fetch(`/mail/v1/integrations/${integration.id}/orders`, json(order(1, "cleo@customer.example")));
    expect(pushed.status).toBe(200);
    expect(await contactEvents()).toEqual([expect.objectContaining({ email: "cleo@customer.example", status: "pending", source, change: "created" })]);

    // An unsubscribed customer orders over gRPC: still unsubscribed, the names written, the change the integration's.
    await h.fetch("/mail/v1/contacts", json({ email: "gone@customer.example", status: "unsubscribed" }));
    const grpc = createClient(IntegrationsService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
    const options = { headers: { authorization: `Bearer ${secret}` } };
    const answer = await grpc.pushOrder({ integrationId: integration.id, order: fromJson(StoreOrderSchema, order(2, "gone@customer.example")) }, options);
    const contact = (await (await h.fetch("/mail/v1/contacts/gone@customer.example", bearer(secret))).json()) as { id: string; status: string; firstName: string };
    expect(contact).toMatchObject({ id: answer.contactId, status: "unsubscribed", firstName: "Cleo" });
    expect((await contactEvents()).map((e) => [e.email, e.status, e.source, e.change])).toEqual([
      ["cleo@customer.example", "pending", source, "created"],
      ["gone@customer.example", "unsubscribed", "api", "created"],
      ["gone@customer.example", "unsubscribed", source, "updated"],
    ]);

    // Another company's integration id: 404 on both doors, nothing recorded for it.
    const other = await h.newCompanyWithKey(["mail.integrations.write"]);
    const foreign = await h.fetch(`/mail/v1/integrations/${integration.id}/orders`, {
      ...bearer(other.secret, { "content-type": "application/json" }),
      method: "POST",
      body: JSON.stringify(order(3, "x@customer.example")),
    });
    expect(foreign.status).toBe(404);
    const refused = await grpc
      .pushOrder({ integrationId: integration.id, order: fromJson(StoreOrderSchema, order(3, "x@customer.example")) }, { headers: { authorization: `Bearer ${other.secret}` } })
      .catch((e: unknown) => e);
    expect((refused as ConnectError).code).toBe(Code.NotFound);
    const { rows } = await h.db.query(`select count(*)::int as n from webhook_event where company_id = $1`, [other.companyId]);
    expect(rows).toEqual([{ n: 0 }]);
  });
});
