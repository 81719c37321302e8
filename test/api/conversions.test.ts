import { randomUUID } from "node:crypto";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { ConversionEventType, ConversionOutcome, ConversionStatus, MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { createConversions } from "../../src/wiring/conversions.ts";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";

/**
 * POST /mail/v1/conversions (gRPC RecordConversion) as a caller sees it:
 * over HTTP with JSON and over gRPC, on a real API process and database.
 */
interface ConversionJson {
  id: string;
  eventId: string;
  eventType: string;
  contactId: string | null;
  email: string | null;
  customerRef: string | null;
  revenue: string;
  currency: string;
  status: string;
  refundedAmount: string;
  netRevenue: string;
  occurredAt: string;
  metadata: JsonObject | null;
  campaignId: string | null;
  linkId: string | null;
  clickedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Answer {
  status: number;
  body: { conversion: ConversionJson; outcome: string } & { error: { code: string; message: string } };
  headers: Headers;
}

const DAY = 24 * 60 * 60_000;
const AT = new Date(Date.now() - 2 * DAY);

describe("POST /mail/v1/conversions", () => {
  let h: ApiHarness;
  let secret: string;
  let companyId: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret, companyId } = await h.newCompanyWithKey(["mail.conversions.write"]));
  });
  afterAll(async () => h?.close());

  async function post(body: JsonObject | string, headers: Record<string, string> = {}, key = secret): Promise<Answer> {
    const response = await h.fetch("/mail/v1/conversions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Answer["body"], headers: response.headers };
  }

  it("answers 202 with the conversion and `recorded`; the same eventId again is a `duplicate` that adds nothing", async () => {
    const order = { eventId: `order-${randomUUID()}`, eventType: "purchase", email: "Ada@Example.com", revenue: 49.95, occurredAt: AT.toISOString() };
    const first = await post({ ...order, metadata: { items: [{ sku: "A1", qty: 2 }] } });
    expect(first.status).toBe(202);
    expect(first.headers.get("x-ratelimit-limit")).toBe("300");
    expect(first.body.outcome).toBe("recorded");
    expect(first.body.conversion).toEqual({
      id: expect.any(String),
      eventId: order.eventId,
      eventType: "purchase",
      contactId: null,
      email: "ada@example.com",
      customerRef: null,
      revenue: "49.95",
      currency: "USD",
      status: "completed",
      refundedAmount: "0",
      netRevenue: "49.95",
      occurredAt: AT.toISOString(),
      metadata: { items: [{ sku: "A1", qty: 2 }] },
      campaignId: null,
      linkId: null,
      clickedAt: null,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updatedAt: first.body.conversion.createdAt,
    });

    // The amount as a decimal string is the same amount.
    const again = await post({ ...order, revenue: "49.950" });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ conversion: first.body.conversion, outcome: "duplicate" });
  });

  it("a refund, then a cancellation, of the same eventId adjusts the conversion; each change is a conversion.recorded event", async () => {
    const eventId = `order-${randomUUID()}`;
    const base = { eventId, eventType: "order_confirmed", customerRef: "cus_77", revenue: "120.50", currency: "eur", occurredAt: AT.toISOString() };
    const recorded = await post(base);
    expect(recorded.body.conversion).toMatchObject({ currency: "EUR", revenue: "120.5", customerRef: "cus_77", contactId: null });

    const refund = await post({ eventId, eventType: "order_confirmed", customerRef: "cus_77", status: "refunded", refundedAmount: "20.25" });
    expect(refund.status).toBe(202);
    expect(refund.body.outcome).toBe("adjusted");
    expect(refund.body.conversion).toMatchObject({
      id: recorded.body.conversion.id,
      status: "refunded",
      revenue: "120.5",
      refundedAmount: "20.25",
      netRevenue: "100.25",
    });
    // A late retry of the original write does not undo the refund.
    expect((await post(base)).body).toMatchObject({ outcome: "duplicate", conversion: { status: "refunded", refundedAmount: "20.25" } });

    const cancel = await post({ eventId, eventType: "order_confirmed", customerRef: "cus_77", status: "cancelled" });
    expect(cancel.body).toMatchObject({ outcome: "adjusted", conversion: { status: "cancelled", refundedAmount: "120.5", netRevenue: "0" } });

    const { rows } = await h.db.query<{ event: string; data: JsonObject }>(
      `select event, data from webhook_event where company_id = $1 and data -> 'conversion' ->> 'eventId' = $2 order by created_at`,
      [companyId, eventId],
    );
    expect(rows.map((r) => r.event)).toEqual(["conversion.recorded", "conversion.recorded", "conversion.recorded"]);
    expect(rows[0]?.data).toEqual({ conversion: recorded.body.conversion });
    expect(rows[1]?.data).toEqual({ conversion: refund.body.conversion, adjustment: { amount: "20.25", reason: "refunded" }, netRevenue: "100.25" });
    expect(rows[2]?.data).toEqual({ conversion: cancel.body.conversion, adjustment: { amount: "100.25", reason: "cancelled" }, netRevenue: "0" });
  });

  it("20 concurrent identical calls record one conversion and all answer it", async () => {
    const body = { eventId: `race-${randomUUID()}`, eventType: "booking", email: "race@example.com", revenue: "10" };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    expect(answers.map((a) => a.status)).toEqual(Array<number>(20).fill(202));
    expect(answers.filter((a) => a.body.outcome === "recorded")).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.conversion.id)).size).toBe(1);
    const { rows } = await h.db.query(`select count(*)::int as n from conversion where company_id = $1 and event_id = $2`, [companyId, body.eventId]);
    expect(rows).toEqual([{ n: 1 }]);
  });

  it("attributes the conversion to the contact's last verified click", async () => {
    const email = `clicker-${randomUUID()}@example.com`;
    // The EventsService records clicks through the capability; here it is built on the service's own database.
    const clicks = createConversions(h.app.orm, { cursorSecret: "unused: this test reads no page" });
    await clicks.recordClick({ companyId, clickId: randomUUID(), campaignId: "spring", linkId: "hero", email, suspect: false, occurredAt: new Date(AT.getTime() - DAY) });
    await clicks.recordClick({ companyId, clickId: randomUUID(), campaignId: "bot", linkId: "x", email, suspect: true, occurredAt: new Date(AT.getTime() - 1_000) });
    const answer = await post({ eventId: randomUUID(), eventType: "purchase", email, revenue: "15", occurredAt: AT.toISOString() });
    expect(answer.body.conversion).toMatchObject({ campaignId: "spring", linkId: "hero", clickedAt: new Date(AT.getTime() - DAY).toISOString() });
    const report = await clicks.revenueByCampaign({ companyId });
    expect(report.find((r) => r.campaignId === "spring")).toMatchObject({ currency: "USD", conversions: 1, gross: 150_000n, net: 150_000n });
  });

  it("answers 400 VALIDATION_ERROR naming every bad field", async () => {
    const bad = await post({
      eventId: "x",
      eventType: "purchase",
      email: "ada@example.com",
      customerRef: "c1",
      revenue: "-1",
      currency: "dollars",
      refundedAmount: 0.123456,
      metadata: { blob: "x".repeat(9_000) },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("VALIDATION_ERROR");
    for (const field of ["contactId, email, customerRef:", "revenue:", "currency:", "refundedAmount:", "metadata:"]) {
      expect(bad.body.error.message).toContain(field);
    }

    const enums = await post({ eventId: "x", eventType: "sale", status: "paid", email: "ada@example.com" });
    expect(enums.status).toBe(400);
    expect(enums.body.error.message).toContain("eventType: must be one of purchase, order_confirmed, registration, lead, booking");
    expect(enums.body.error.message).toContain("status: must be one of completed, refunded, cancelled");

    const missing = await post({ email: "ada@example.com" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/eventId: is required.*eventType: is required/);

    // Fields whose JSON type is wrong are named together by the JSON reader, before the rules run.
    const wrongType = await post({ eventId: "x", eventType: "lead", email: "a@example.com", occurredAt: "yesterday", metadata: [1] });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain("occurredAt: must be an ISO 8601 date-time");
    expect(wrongType.body.error.message).toContain("metadata: must be an object");
    const notAnAmount = await post({ eventId: "x", eventType: "lead", email: "a@example.com", revenue: true, refundedAmount: { v: 1 } });
    expect(notAnAmount.status).toBe(400);
    expect(notAnAmount.body.error.message).toMatch(/^revenue: must be a non-negative decimal number.*; refundedAmount: must be/);
  });

  it("answers 409 IDEMPOTENCY_CONFLICT for another conversion under a used eventId, and 404 for a contact of another company", async () => {
    const eventId = randomUUID();
    await post({ eventId, eventType: "lead", email: "lee@example.com", revenue: 5 });
    const conflict = await post({ eventId, eventType: "lead", email: "lee@example.com", revenue: 6 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("IDEMPOTENCY_CONFLICT");

    const other = await h.newCompanyWithKey(["mail.conversions.write"], "Other Inc.");
    const { rows } = await h.db.query<{ id: string }>(
      `insert into contact (company_id, email, email_normalized, status) values ($1, 'x@example.com', 'x@example.com', 'pending') returning id`,
      [other.companyId],
    );
    const foreign = await post({ eventId: randomUUID(), eventType: "lead", contactId: rows[0]?.id ?? "" });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("NOT_FOUND");
    // Its own company finds it.
    const own = await post({ eventId: randomUUID(), eventType: "lead", contactId: rows[0]?.id ?? "" }, {}, other.secret);
    expect(own.status).toBe(202);
    expect(own.body.conversion).toMatchObject({ contactId: rows[0]?.id, email: "x@example.com" });
  });

  it("needs the mail.conversions.write scope", async () => {
    const { secret: readOnly } = await h.newKey(companyId, ["mail.events.read"]);
    const answer = await post({ eventId: "e", eventType: "lead", email: "a@example.com" }, {}, readOnly);
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe("FORBIDDEN");
  });

  it("replays the first answer for a repeated Idempotency-Key", async () => {
    const body = { eventId: randomUUID(), eventType: "registration", email: "reg@example.com" };
    const key = randomUUID();
    const first = await post(body, { "idempotency-key": key });
    const replay = await post(body, { "idempotency-key": key });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
  });

  it("over gRPC: amounts as google.protobuf.Value strings or numbers, the same rules and codes", async () => {
    const mail = createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
    const options = { headers: { authorization: `Bearer ${secret}` } };
    const eventId = randomUUID();
    const request = {
      eventId,
      eventType: ConversionEventType.PURCHASE,
      email: "grpc@example.com",
      revenue: create(ValueSchema, { kind: { case: "stringValue", value: "99999999999.9999" } }),
      refundedAmount: create(ValueSchema, { kind: { case: "numberValue", value: 0.5 } }),
    };
    const answer = await mail.recordConversion(request, options);
    expect(answer.outcome).toBe(ConversionOutcome.RECORDED);
    expect(answer.conversion).toMatchObject({
      eventId,
      eventType: ConversionEventType.PURCHASE,
      status: ConversionStatus.COMPLETED,
      revenue: "99999999999.9999",
      refundedAmount: "0.5",
      netRevenue: "99999999999.4999",
      currency: "USD",
    });
    expect((await mail.recordConversion(request, options)).outcome).toBe(ConversionOutcome.DUPLICATE);

    const failure = await mail
      .recordConversion({ ...request, eventId: randomUUID(), eventType: 42 as ConversionEventType, currency: "E" }, options)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ConnectError);
    const error = failure as ConnectError;
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.findDetails(ErrorInfoSchema)[0]?.reason).toBe("VALIDATION_ERROR");
    expect(error.rawMessage).toContain("eventType: must be one of");
    expect(error.rawMessage).toContain("currency:");
  });
});
