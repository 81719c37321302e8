import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../../src/contract/api-error.ts";
import { type CampaignClick, type ConversionInput, formatAmount } from "../../../src/capabilities/conversions/index.ts";
import { type ConversionsHarness, openConversionsHarness } from "./harness.ts";

const DAY = 24 * 60 * 60_000;
/** A fixed conversion time in the past (occurredAt may not be more than a day ahead). */
const AT = new Date(Date.now() - 10 * DAY);
const before = (ms: number) => new Date(AT.getTime() - ms);

let h: ConversionsHarness;

beforeAll(async () => {
  h = await openConversionsHarness(24);
});
afterAll(async () => h?.close());

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

let clickCounter = 0;
function click(extra: Partial<CampaignClick>): CampaignClick {
  clickCounter += 1;
  return { clickId: `click-${clickCounter}`, campaignId: "spring-sale", linkId: "cta", suspect: false, occurredAt: before(DAY), ...extra };
}

describe("recording a conversion", () => {
  it("records it once: a resend is a duplicate and adds no revenue, a refund adjusts it; each change has its event", async () => {
    const companyId = await h.newCompany();
    const write: ConversionInput = {
      eventId: "order-1001",
      eventType: "purchase",
      email: "Ada@Example.com",
      revenue: "49.95",
      currency: "eur",
      occurredAt: AT,
      metadata: { items: 2 },
    };
    const first = await h.conversions.record({ companyId, ...write });
    expect(first.outcome).toBe("recorded");
    expect(first.conversion).toMatchObject({
      eventId: "order-1001",
      eventType: "purchase",
      email: "ada@example.com",
      contactId: null,
      revenue: 499_500n,
      currency: "EUR",
      status: "completed",
      refundedAmount: 0n,
      occurredAt: AT,
      metadata: { items: 2 },
      version: 1,
    });

    const again = await h.conversions.record({ companyId, ...write });
    expect(again.outcome).toBe("duplicate");
    expect(again.conversion).toEqual(first.conversion);

    const refund = await h.conversions.record({ companyId, ...write, status: "refunded", refundedAmount: "10", metadata: { reason: "damaged" } });
    expect(refund.outcome).toBe("adjusted");
    expect(refund.conversion).toMatchObject({
      id: first.conversion.id,
      status: "refunded",
      revenue: 499_500n,
      refundedAmount: 100_000n,
      metadata: { reason: "damaged" },
      version: 2,
    });
    expect(await h.conversions.record({ companyId, ...write, status: "refunded", refundedAmount: "10" })).toMatchObject({ outcome: "duplicate" });

    const cancel = await h.conversions.record({ companyId, eventId: "order-1001", eventType: "purchase", email: "ada@example.com", status: "cancelled" });
    expect(cancel).toMatchObject({ outcome: "adjusted", conversion: { status: "cancelled", refundedAmount: 499_500n, version: 3 } });

    const events = await h.outbox(companyId);
    expect(events.map((e) => e.event)).toEqual(["conversion.recorded", "conversion.recorded", "conversion.recorded"]);
    const [recorded, refunded, cancelled] = events;
    expect(recorded?.data).toEqual({
      conversion: {
        id: first.conversion.id,
        eventId: "order-1001",
        eventType: "purchase",
        contactId: null,
        email: "ada@example.com",
        customerRef: null,
        revenue: "49.95",
        currency: "EUR",
        status: "completed",
        refundedAmount: "0",
        netRevenue: "49.95",
        occurredAt: AT.toISOString(),
        metadata: { items: 2 },
        campaignId: null,
        linkId: null,
        clickedAt: null,
        createdAt: first.conversion.createdAt.toISOString(),
        updatedAt: first.conversion.updatedAt.toISOString(),
      },
    });
    expect(refunded?.data).toMatchObject({
      conversion: { status: "refunded", refundedAmount: "10", netRevenue: "39.95" },
      adjustment: { amount: "10", reason: "refunded" },
      netRevenue: "39.95",
    });
    expect(cancelled?.data).toMatchObject({
      conversion: { status: "cancelled", refundedAmount: "49.95", netRevenue: "0" },
      adjustment: { amount: "39.95", reason: "cancelled" },
      netRevenue: "0",
    });
    expect(cancelled?.occurredAt).toEqual(cancel.conversion.updatedAt);
  });

  it("20 concurrent identical writes record one conversion; every answer is that conversion, with one event", async () => {
    const companyId = await h.newCompany();
    const write: ConversionInput = { eventId: "race-1", eventType: "purchase", customerRef: "cus_1", revenue: 20, occurredAt: AT };
    const answers = await Promise.all(Array.from({ length: 20 }, () => h.conversions.record({ companyId, ...write })));
    expect(answers.filter((a) => a.outcome === "recorded")).toHaveLength(1);
    expect(answers.filter((a) => a.outcome === "duplicate")).toHaveLength(19);
    expect(new Set(answers.map((a) => a.conversion.id)).size).toBe(1);
    const { rows } = await h.base.db.query(`select revenue::text from conversion where company_id = $1`, [companyId]);
    expect(rows).toEqual([{ revenue: "20.0000" }]);
    expect(await h.outbox(companyId)).toHaveLength(1);
  });

  it("10 concurrent identical refunds adjust once: the refund is counted once", async () => {
    const companyId = await h.newCompany();
    const base: ConversionInput = { eventId: "race-2", eventType: "booking", customerRef: "cus_2", revenue: "100", occurredAt: AT };
    await h.conversions.record({ companyId, ...base });
    const refunds = await Promise.all(
      Array.from({ length: 10 }, () => h.conversions.record({ companyId, ...base, status: "refunded", refundedAmount: "30" })),
    );
    expect(refunds.map((r) => r.outcome).sort()).toEqual(["adjusted", ...Array<string>(9).fill("duplicate")]);
    for (const r of refunds) expect(r.conversion).toMatchObject({ refundedAmount: 300_000n, version: 2 });
    const events = await h.outbox(companyId);
    expect(events.map((e) => e.data.adjustment ?? null)).toEqual([null, { amount: "30", reason: "refunded" }]);
  });

  it("a write that contradicts the first changes nothing and records no event", async () => {
    const companyId = await h.newCompany();
    const base: ConversionInput = { eventId: "o-3", eventType: "purchase", email: "bob@example.com", revenue: "10", occurredAt: AT };
    await h.conversions.record({ companyId, ...base });
    const conflict = await rejection(h.conversions.record({ companyId, ...base, revenue: "11", status: "refunded" }));
    expect(conflict.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(conflict.message).toMatch(/revenue/);
    const tooMuch = await rejection(h.conversions.record({ companyId, ...base, revenue: undefined, refundedAmount: "10.5" }));
    expect(tooMuch.code).toBe("VALIDATION_ERROR");
    expect(tooMuch.message).toBe("refundedAmount: must not exceed revenue (10)");
    // A refund written without revenue is checked against the stored revenue, not the default.
    expect(await h.conversions.record({ companyId, ...base, revenue: undefined, refundedAmount: "10" })).toMatchObject({
      outcome: "adjusted",
      conversion: { refundedAmount: 100_000n, status: "completed" },
    });
    expect(await h.outbox(companyId)).toHaveLength(2);
  });

  it("a first write that refunds more than its revenue records nothing", async () => {
    const companyId = await h.newCompany();
    const error = await rejection(h.conversions.record({ companyId, eventId: "o-4", eventType: "lead", email: "c@example.com", refundedAmount: "1" }));
    expect(error.message).toBe("refundedAmount: must not exceed revenue (0)");
    expect(await h.outbox(companyId)).toEqual([]);
    const { rows } = await h.base.db.query(`select 1 from conversion where company_id = $1`, [companyId]);
    expect(rows).toEqual([]);
  });

  it("keeps amounts exact at the bound and answers every bad field in one VALIDATION_ERROR", async () => {
    const companyId = await h.newCompany();
    const max = await h.conversions.record({ companyId, eventId: "big",
      eventType: "purchase",
      customerRef: "c",
      revenue: "99999999999.9999",
      refundedAmount: 0.0001,
      occurredAt: AT });
    expect(formatAmount(max.conversion.revenue)).toBe("99999999999.9999");
    expect(formatAmount(max.conversion.revenue - max.conversion.refundedAmount)).toBe("99999999999.9998");

    const error = await rejection(
      h.conversions.record({ companyId, eventId: "bad", eventType: "sale", currency: "DOLLAR", revenue: "1.00001", status: "paid" }),
    );
    expect(error.code).toBe("VALIDATION_ERROR");
    for (const field of ["eventType", "contactId, email, customerRef", "revenue", "currency", "status"]) expect(error.message).toContain(`${field}:`);
  });
});

describe("the contact of a conversion", () => {
  it("is the contact of contactId (404 when the company has none) or the contact whose address matches email", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany("Other");
    const contactId = await h.newContact(companyId, "Dee@Example.com");
    const foreignContact = await h.newContact(other, "dee@example.com");

    const byId = await h.conversions.record({ companyId, eventId: "a", eventType: "registration", contactId, occurredAt: AT });
    expect(byId.conversion).toMatchObject({ contactId, email: "dee@example.com", customerRef: null });
    const byEmail = await h.conversions.record({ companyId, eventId: "b", eventType: "registration", email: "DEE@example.com", occurredAt: AT });
    expect(byEmail.conversion).toMatchObject({ contactId, email: "dee@example.com" });
    const byRef = await h.conversions.record({ companyId, eventId: "c", eventType: "registration", customerRef: "cus_9", occurredAt: AT });
    expect(byRef.conversion).toMatchObject({ contactId: null, email: null, customerRef: "cus_9" });

    const missing = await rejection(
      h.conversions.record({ companyId, eventId: "d", eventType: "lead", contactId: foreignContact, occurredAt: AT }),
    );
    expect(missing.code).toBe("NOT_FOUND");
  });
});

describe("attribution to the last verified click", () => {
  it("credits the latest non-suspect click before occurredAt within 30 days, by the contact's id or address", async () => {
    const companyId = await h.newCompany();
    const contactId = await h.newContact(companyId, "eve@example.com");
    const clicks = h.conversions;
    // By address, older.
    await clicks.recordClick({ companyId, ...click({ email: "EVE@example.com", campaignId: "welcome", linkId: "l1", occurredAt: before(3 * DAY) }) });
    // By contact id, the latest verified one before the conversion.
    await clicks.recordClick({ companyId, ...click({ contactId, campaignId: "spring-sale", linkId: "cta", occurredAt: before(2 * DAY) }) });
    // Later but suspect (a link scanner): never credited.
    await clicks.recordClick({ companyId, ...click({ contactId, email: "eve@example.com", campaignId: "scanner", linkId: "x", suspect: true, occurredAt: before(DAY) }) });
    // After the conversion: not its cause.
    await clicks.recordClick({ companyId, ...click({ contactId, campaignId: "after", linkId: "x", occurredAt: new Date(AT.getTime() + 60_000) }) });

    const byEmail = await clicks.record({ companyId, eventId: "p1", eventType: "purchase", email: "eve@example.com", revenue: 10, occurredAt: AT });
    expect(byEmail.conversion).toMatchObject({ campaignId: "spring-sale", linkId: "cta", clickedAt: before(2 * DAY) });

    // A conversion right after the later click is credited to it.
    const later = await clicks.record({ companyId, eventId: "p2",
      eventType: "purchase",
      contactId,
      revenue: 5,
      occurredAt: new Date(AT.getTime() + 2 * 60_000) });
    expect(later.conversion).toMatchObject({ campaignId: "after", linkId: "x" });
  });

  it("leaves a conversion unattributed without a verified click in the window, and never uses another company's clicks", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany("Other");
    await h.conversions.recordClick({ companyId, ...click({ email: "fay@example.com", campaignId: "old", occurredAt: before(30 * DAY + 1_000) }) });
    await h.conversions.recordClick({ companyId, ...click({ email: "fay@example.com", campaignId: "bot", suspect: true, occurredAt: before(DAY) }) });
    await h.conversions.recordClick({ companyId: other, ...click({ email: "fay@example.com", campaignId: "theirs", occurredAt: before(DAY) }) });
    const answer = await h.conversions.record({ companyId, eventId: "p", eventType: "purchase", email: "fay@example.com", revenue: 1, occurredAt: AT });
    expect(answer.conversion).toMatchObject({ campaignId: null, linkId: null, clickedAt: null });

    // A click just inside the 30 days counts.
    await h.conversions.recordClick({ companyId, ...click({ email: "fay@example.com", campaignId: "edge", linkId: "e", occurredAt: before(30 * DAY - 1_000) }) });
    const edge = await h.conversions.record({ companyId, eventId: "q", eventType: "purchase", email: "fay@example.com", occurredAt: AT });
    expect(edge.conversion.campaignId).toBe("edge");
  });

  it("keeps the first write's attribution through refunds", async () => {
    const companyId = await h.newCompany();
    await h.conversions.recordClick({ companyId, ...click({ email: "gus@example.com", campaignId: "c1", linkId: "l", occurredAt: before(DAY) }) });
    const write: ConversionInput = { eventId: "r", eventType: "purchase", email: "gus@example.com", revenue: "80", occurredAt: AT };
    await h.conversions.record({ companyId, ...write });
    await h.conversions.recordClick({ companyId, ...click({ email: "gus@example.com", campaignId: "c2", linkId: "l", occurredAt: before(60_000) }) });
    const refund = await h.conversions.record({ companyId, ...write, status: "refunded" });
    expect(refund.conversion).toMatchObject({ campaignId: "c1", status: "refunded", refundedAmount: 800_000n });
  });
});

describe("clicks", () => {
  it("are recorded once per clickId, and checked", async () => {
    const companyId = await h.newCompany();
    const one = click({ email: "hal@example.com" });
    expect(await h.conversions.recordClick({ companyId, ...one })).toEqual({ recorded: true });
    expect(await h.conversions.recordClick({ companyId, ...one })).toEqual({ recorded: false });
    // The same id in another company is another click.
    expect(await h.conversions.recordClick({ companyId: await h.newCompany("Other"), ...one })).toEqual({ recorded: true });

    const error = await rejection(h.conversions.recordClick({ companyId, ...click({}), clickId: "", campaignId: "", linkId: "l".repeat(201) }));
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toBe(
      "clickId: is required; campaignId: is required; linkId: must be at most 200 characters; " +
        "contactId, email: at least one identifies who clicked (contactId as a contact id, a UUID)",
    );
    // An id of another system is no contact id: the click is kept and matched by its address.
    expect(await h.conversions.recordClick({ companyId, ...click({ contactId: "crm-7", email: "Ida@Example.com", occurredAt: before(DAY) }) })).toEqual({
      recorded: true,
    });
    const answer = await h.conversions.record({ companyId, eventId: "i", eventType: "lead", email: "ida@example.com", occurredAt: AT });
    expect(answer.conversion.campaignId).toBe("spring-sale");
  });
});

describe("revenue per campaign", () => {
  it("sums gross, refunded and net per campaign and currency, exactly, over the conversions that occurred in the period", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany("Other");
    for (const [email, campaignId] of [
      ["a@example.com", "spring"],
      ["b@example.com", "spring"],
      ["c@example.com", "autumn"],
    ] as const) {
      await h.conversions.recordClick({ companyId, ...click({ email, campaignId, occurredAt: before(DAY) }) });
    }
    await h.conversions.recordClick({ companyId: other, ...click({ email: "a@example.com", campaignId: "spring", occurredAt: before(DAY) }) });

    const record = (companyOf: string, eventId: string, extra: Partial<ConversionInput>) =>
      h.conversions.record({ companyId: companyOf, ...{ eventId, eventType: "purchase", occurredAt: AT, ...extra } as ConversionInput });
    await record(companyId, "1", { email: "a@example.com", revenue: "0.1" });
    await record(companyId, "2", { email: "b@example.com", revenue: "0.2" });
    await record(companyId, "2", { email: "b@example.com", status: "refunded", refundedAmount: "0.05" });
    await record(companyId, "3", { email: "a@example.com", revenue: "7", currency: "EUR" });
    await record(companyId, "4", { email: "c@example.com", revenue: "30" });
    await record(companyId, "4", { email: "c@example.com", status: "cancelled" });
    await record(companyId, "5", { email: "nobody@example.com", revenue: "1000" });
    await record(other, "1", { email: "a@example.com", revenue: "999" });
    await record(companyId, "6", { email: "a@example.com", revenue: "5", occurredAt: before(20 * DAY) });

    const rows = (await h.conversions.revenueByCampaign({ companyId, since: before(DAY) })).map((r) => ({
      ...r,
      gross: formatAmount(r.gross),
      refunded: formatAmount(r.refunded),
      net: formatAmount(r.net),
    }));
    expect(rows).toEqual([
      { campaignId: "autumn", currency: "USD", conversions: 1, gross: "30", refunded: "30", net: "0" },
      { campaignId: "spring", currency: "EUR", conversions: 1, gross: "7", refunded: "0", net: "7" },
      { campaignId: "spring", currency: "USD", conversions: 2, gross: "0.3", refunded: "0.05", net: "0.25" },
    ]);
    // Without a period: every attributed conversion (the older one was attributed to nothing: its click came later).
    const all = await h.conversions.revenueByCampaign({ companyId });
    expect(all.map((r) => `${r.campaignId}/${r.currency}:${r.conversions}`)).toEqual(["autumn/USD:1", "spring/EUR:1", "spring/USD:2"]);
    expect(await h.conversions.revenueByCampaign({ companyId, until: before(DAY) })).toEqual([]);
  });
});
