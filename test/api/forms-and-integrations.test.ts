import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    const { form } = await h.admin.createSignupForm({
      companyId: mine.companyId,
      name: "Newsletter",
      fields: [field],
      consentText: "Yes, send me news.",
      language: "en",
    });
    await h.admin.createSignupForm({ companyId: other.companyId, name: "Theirs", fields: [field], consentText: "x", language: "en" });

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

    await h.admin.deactivateSignupForm({ companyId: mine.companyId, publicId: form?.publicId ?? "" });
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
    for (let i = 0; i < 2; i++) {
      const pushed = await h.fetch(`/mail/v1/integrations/${integration.id}/orders`, json(order));
      expect(pushed.status).toBe(200);
    }
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
});
