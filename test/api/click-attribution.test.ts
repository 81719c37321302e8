import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import { ReportsService } from "../../src/gen/mail/v1/reports_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";

/**
 * Campaign clicks reach attribution through the internal EventsService
 * (gRPC, operator listener): a `campaign.click` is published for webhooks
 * AND kept in the click ledger; a conversion recorded later is credited to
 * the contact's last verified (not suspect) click before its occurredAt,
 * within 30 days. The revenue per campaign is then a report for the
 * company's administrators (GET /mail/v1/reports/revenue-by-campaign,
 * gRPC ReportsService) and for operators (the ReportsService on the operator listener, x-mail-company-id).
 */
const DAY = 24 * 60 * 60_000;
const HOUR = 60 * 60_000;
const AT = new Date(Date.now() - 2 * DAY);

interface ConversionJson {
  id: string;
  campaignId: string | null;
  linkId: string | null;
  clickedAt: string | null;
  revenue: string;
  netRevenue: string;
}

interface RevenueRow {
  campaignId: string;
  currency: string;
  conversions: string;
  gross: string;
  refunded: string;
  net: string;
}

function withToken(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

describe("clicks published through the EventsService attribute conversions", () => {
  let h: ApiHarness;
  let events: Client<typeof EventsService>;
  let grpcReports: Client<typeof ReportsService>;
  let a: { companyId: string; secret: string };
  let b: { companyId: string; secret: string };

  beforeAll(async () => {
    h = await startApiHarness();
    // gRPC (HTTP/2) on the operator listener, where the EventsService and the company services (x-mail-company-id) are served.
    const operator = createGrpcTransport({ baseUrl: h.app.operatorUrl, interceptors: [withToken(OPERATOR_TOKEN)] });
    events = createClient(EventsService, operator);
    grpcReports = createClient(ReportsService, operator);
    a = await h.newCompanyWithKey(["mail.conversions.write", "mail.contacts.write", "mail.admin"], "Shop A");
    b = await h.newCompanyWithKey(["mail.conversions.write", "mail.contacts.write", "mail.admin"], "Shop B");
  });
  afterAll(async () => h?.close());

  function post(path: string, body: unknown, secret: string): Promise<Response> {
    return h.fetch(path, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  }

  async function contact(secret: string, email: string): Promise<string> {
    const response = await post("/mail/v1/contacts", { email }, secret);
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  }

  interface Click {
    companyId: string;
    campaignId: string;
    linkId: string;
    email: string;
    contactId?: string;
    suspect: boolean;
    at: Date;
    eventId?: string;
  }

  function click(c: Click) {
    return events.publishEvent({
      companyId: c.companyId,
      eventId: c.eventId ?? randomUUID(),
      event: "campaign.click",
      occurredAt: timestampFromDate(c.at),
      data: {
        case: "campaign",
        value: { campaignId: c.campaignId, recipientId: "rcp_1", contactId: c.contactId ?? "ct_external", email: c.email, linkId: c.linkId, suspect: c.suspect },
      },
    });
  }

  async function convert(secret: string, body: Record<string, unknown>): Promise<ConversionJson> {
    const response = await post("/mail/v1/conversions", { eventId: randomUUID(), eventType: "purchase", occurredAt: AT.toISOString(), ...body }, secret);
    expect(response.status).toBe(202);
    return ((await response.json()) as { conversion: ConversionJson }).conversion;
  }

  it("credits the last verified click before occurredAt: never a suspect one, a later one, another contact's or one older than 30 days", async () => {
    const email = `ada-${randomUUID()}@example.com`;
    const contactId = await contact(a.secret, email);
    const verified = new Date(AT.getTime() - 3 * DAY);
    await click({ companyId: a.companyId, campaignId: "spring", linkId: "hero", email, contactId, suspect: false, at: verified });
    // Later than the verified click, but each is disqualified: suspect, after the conversion, someone else's, another company's.
    await click({ companyId: a.companyId, campaignId: "scanner", linkId: "x", email, contactId, suspect: true, at: new Date(AT.getTime() - HOUR) });
    await click({ companyId: a.companyId, campaignId: "late", linkId: "x", email, contactId, suspect: false, at: new Date(AT.getTime() + HOUR) });
    await click({ companyId: a.companyId, campaignId: "neighbour", linkId: "x", email: `bob-${randomUUID()}@example.com`, suspect: false, at: new Date(AT.getTime() - HOUR) });
    await click({ companyId: b.companyId, campaignId: "foreign", linkId: "x", email, suspect: false, at: new Date(AT.getTime() - HOUR) });

    const conversion = await convert(a.secret, { contactId, revenue: "80" });
    expect(conversion).toMatchObject({ campaignId: "spring", linkId: "hero", clickedAt: verified.toISOString() });

    // Only a suspect click: not attributed.
    const botOnly = `bot-${randomUUID()}@example.com`;
    await click({ companyId: a.companyId, campaignId: "scanner", linkId: "x", email: botOnly, suspect: true, at: new Date(AT.getTime() - HOUR) });
    expect(await convert(a.secret, { email: botOnly, revenue: "5" })).toMatchObject({ campaignId: null, linkId: null, clickedAt: null });

    // Only a verified click outside the window (31 days before): not attributed; 29 days before: attributed.
    const old = `old-${randomUUID()}@example.com`;
    await click({ companyId: a.companyId, campaignId: "ancient", linkId: "x", email: old, suspect: false, at: new Date(AT.getTime() - 31 * DAY) });
    expect(await convert(a.secret, { email: old, revenue: "5" })).toMatchObject({ campaignId: null });
    await click({ companyId: a.companyId, campaignId: "recent", linkId: "y", email: old, suspect: false, at: new Date(AT.getTime() - 29 * DAY) });
    expect(await convert(a.secret, { email: old, revenue: "5" })).toMatchObject({ campaignId: "recent", linkId: "y" });
  });

  it("matches a click without a contact id by the address, in any spelling", async () => {
    const email = `Cy-${randomUUID()}@Example.COM`;
    await click({ companyId: a.companyId, campaignId: "by-address", linkId: "cta", email, suspect: false, at: new Date(AT.getTime() - DAY) });
    const conversion = await convert(a.secret, { email: email.toLowerCase(), revenue: "12.5" });
    expect(conversion).toMatchObject({ campaignId: "by-address", linkId: "cta" });
  });

  it("a replayed click publishes nothing new and is kept once; a click the ledger refuses is refused before anything is published", async () => {
    const email = `replay-${randomUUID()}@example.com`;
    const eventId = randomUUID();
    const first = await click({ companyId: a.companyId, campaignId: "replay", linkId: "l", email, suspect: false, at: new Date(AT.getTime() - DAY), eventId });
    const again = await click({ companyId: a.companyId, campaignId: "replay", linkId: "l", email, suspect: false, at: new Date(AT.getTime() - DAY), eventId });
    expect(first.replayed).toBe(false);
    expect(again).toEqual(expect.objectContaining({ id: first.id, replayed: true }));
    const kept = await h.db.query(`select count(*)::int as n from campaign_click where company_id = $1 and click_id = $2`, [a.companyId, eventId]);
    expect(kept.rows).toEqual([{ n: 1 }]);

    const refusedId = randomUUID();
    const refused = await click({ companyId: a.companyId, campaignId: "bad\u0001id", linkId: "l", email, suspect: false, at: AT, eventId: refusedId }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
    expect((refused as ConnectError).rawMessage).toContain("campaign.campaignId: must not contain control characters");
    // Nothing was published under that event id: sending it again, corrected, is a first publication.
    const corrected = await click({ companyId: a.companyId, campaignId: "good-id", linkId: "l", email, suspect: false, at: AT, eventId: refusedId });
    expect(corrected.replayed).toBe(false);
  });

  it("reports gross, refunded and net revenue per campaign as exact decimals, to the company's administrators and to operators", async () => {
    const shop = await h.newCompanyWithKey(["mail.conversions.write", "mail.admin"], "Report Shop");
    const email = `rep-${randomUUID()}@example.com`;
    await click({ companyId: shop.companyId, campaignId: "autumn", linkId: "hero", email, suspect: false, at: new Date(AT.getTime() - DAY) });
    // 0.1 + 0.2 is 0.30000000000000004 in floating point: the report must say 0.3.
    const first = await convert(shop.secret, { email, revenue: "0.1" });
    await convert(shop.secret, { email, revenue: 0.2 });
    await convert(shop.secret, { email, revenue: "100", currency: "EUR" });
    const refunded = await post("/mail/v1/conversions", { eventId: randomUUID(), eventType: "purchase", email, revenue: "0.05", occurredAt: AT.toISOString() }, shop.secret);
    const refundId = ((await refunded.json()) as { conversion: { eventId: string } }).conversion.eventId;
    await post("/mail/v1/conversions", { eventId: refundId, eventType: "purchase", email, status: "refunded" }, shop.secret);
    // An unattributed conversion is in no campaign's row.
    await convert(shop.secret, { email: `nobody-${randomUUID()}@example.com`, revenue: "999" });
    expect(first.campaignId).toBe("autumn");

    const expected: RevenueRow[] = [
      { campaignId: "autumn", currency: "EUR", conversions: "1", gross: "100", refunded: "0", net: "100" },
      { campaignId: "autumn", currency: "USD", conversions: "3", gross: "0.35", refunded: "0.05", net: "0.3" },
    ];
    const rest = await h.fetch("/mail/v1/reports/revenue-by-campaign", bearer(shop.secret));
    expect(rest.status).toBe(200);
    expect(await rest.json()).toEqual({ items: expected });

    // The period: conversions that occurred in [since, until).
    const since = encodeURIComponent(new Date(AT.getTime() + 1).toISOString());
    expect(await (await h.fetch(`/mail/v1/reports/revenue-by-campaign?since=${since}`, bearer(shop.secret))).json()).toEqual({ items: [] });
    const until = encodeURIComponent(new Date(AT.getTime() + 1).toISOString());
    expect(await (await h.fetch(`/mail/v1/reports/revenue-by-campaign?until=${until}`, bearer(shop.secret))).json()).toEqual({ items: expected });
    const badSince = await h.fetch("/mail/v1/reports/revenue-by-campaign?since=yesterday", bearer(shop.secret));
    expect(badSince.status).toBe(400);
    expect(((await badSince.json()) as { error: { message: string } }).error.message).toContain("since");

    // gRPC: ReportsService on the public gRPC listener.
    const reports = createClient(ReportsService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [withToken(shop.secret)] }));
    const grpc = await reports.getRevenueByCampaign({});
    expect(grpc.items.map((r) => ({ ...r, $typeName: undefined, conversions: String(r.conversions) }))).toEqual(
      expected.map((r) => ({ ...r, $typeName: undefined })),
    );

    // Operators: the ReportsService on the operator listener over Connect and gRPC, the company in x-mail-company-id.
    const connectRows = (await h.forCompany(ReportsService, shop.companyId).getRevenueByCampaign({})).items;
    const grpcRows = (
      await grpcReports.getRevenueByCampaign({ until: timestampFromDate(new Date(AT.getTime() + 1)) }, { headers: { "x-mail-company-id": shop.companyId } })
    ).items;
    for (const rows of [connectRows, grpcRows]) {
      expect(rows.map((r) => [r.campaignId, r.currency, r.conversions, r.gross, r.refunded, r.net])).toEqual(
        expected.map((r) => [r.campaignId, r.currency, BigInt(r.conversions), r.gross, r.refunded, r.net]),
      );
    }
  });

  it("each company's report holds its own campaigns only; another company's id or an unknown one is 404 for operators", async () => {
    const mine = await h.newCompanyWithKey(["mail.conversions.write", "mail.admin"], "Mine");
    const theirs = await h.newCompanyWithKey(["mail.conversions.write", "mail.admin"], "Theirs");
    const email = `shared-${randomUUID()}@example.com`;
    await click({ companyId: theirs.companyId, campaignId: "their-campaign", linkId: "l", email, suspect: false, at: new Date(AT.getTime() - DAY) });
    await convert(theirs.secret, { email, revenue: "10" });
    // The same address converts at "mine": their click is not mine.
    expect(await convert(mine.secret, { email, revenue: "10" })).toMatchObject({ campaignId: null });

    expect(await (await h.fetch("/mail/v1/reports/revenue-by-campaign", bearer(mine.secret))).json()).toEqual({ items: [] });
    const their = (await (await h.fetch("/mail/v1/reports/revenue-by-campaign", bearer(theirs.secret))).json()) as { items: RevenueRow[] };
    expect(their.items.map((r) => r.campaignId)).toEqual(["their-campaign"]);

    const unknown = await grpcReports.getRevenueByCampaign({}, { headers: { "x-mail-company-id": randomUUID() } }).catch((e: unknown) => e);
    expect((unknown as ConnectError).code).toBe(Code.NotFound);
    const malformed = await h.forCompany(ReportsService, "not-a-company").getRevenueByCampaign({}).catch((e: unknown) => e);
    expect((malformed as ConnectError).code).toBe(Code.NotFound);
  });

  it("needs the mail.admin scope, and is not served to API keys on the operator listener", async () => {
    const writer = await h.newCompanyWithKey(["mail.conversions.write"], "Writer");
    const refused = await h.fetch("/mail/v1/reports/revenue-by-campaign", bearer(writer.secret));
    expect(refused.status).toBe(403);
    const reports = createClient(ReportsService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [withToken(writer.secret)] }));
    expect(((await reports.getRevenueByCampaign({}).catch((e: unknown) => e)) as ConnectError).code).toBe(Code.PermissionDenied);
    const asKey = createClient(ReportsService, createGrpcTransport({ baseUrl: h.app.operatorUrl, interceptors: [withToken(a.secret)] }));
    expect(((await asKey.getRevenueByCampaign({}, { headers: { "x-mail-company-id": a.companyId } }).catch((e: unknown) => e)) as ConnectError).code).toBe(Code.PermissionDenied);
  });
});
