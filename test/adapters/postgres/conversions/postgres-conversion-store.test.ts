import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresConversionStore } from "../../../../src/adapters/postgres/conversions/index.ts";
import {
  type ConversionRecord,
  type ConversionWrite,
  conversionEvent,
  type NewConversion,
} from "../../../../src/capabilities/conversions/index.ts";
import { ApiError } from "../../../../src/contract/api-error.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

describe("PostgresConversionStore", () => {
  let h: SendingHarness;
  let store: PostgresConversionStore;

  beforeAll(async () => {
    h = await openSendingHarness({}, 12);
    store = new PostgresConversionStore(h.orm);
  });
  afterAll(async () => h?.close());

  function fresh(eventId: string, extra: Partial<NewConversion> = {}): NewConversion {
    return {
      id: randomUUID(),
      eventId,
      eventType: "purchase",
      contactId: null,
      email: "ada@example.com",
      customerRef: null,
      revenue: 499_500n,
      currency: "USD",
      status: "completed",
      refundedAmount: 0n,
      occurredAt: new Date("2026-01-02T03:04:05.678Z"),
      metadata: { nested: { a: [1, "two", null] } },
      campaignId: "camp",
      linkId: "link",
      clickedAt: new Date("2026-01-01T00:00:00.000Z"),
      ...extra,
    };
  }

  function write(companyId: string, conversion: NewConversion, decide: ConversionWrite["decide"] = () => ({ kind: "duplicate" })): ConversionWrite {
    return { companyId, eventId: conversion.eventId, first: () => ({ conversion, adjustment: null }), decide, event: conversionEvent };
  }

  async function outboxCount(companyId: string): Promise<number> {
    const { rows } = await h.db.query<{ n: string }>(`select count(*) as n from webhook_event where company_id = $1`, [companyId]);
    return Number(rows[0]?.n);
  }

  it("stores and reads back every field exactly", async () => {
    const companyId = await h.newCompany();
    const input = fresh("e1", { revenue: 999_999_999_999_999n, refundedAmount: 1n });
    const { conversion, outcome } = await store.write(write(companyId, input));
    expect(outcome).toBe("recorded");
    const expected: Partial<ConversionRecord> = { ...input, version: 1 };
    delete (expected as { id?: string }).id;
    expect(conversion).toMatchObject({ ...expected, id: input.id });
    expect(await store.findByEventId(companyId, "e1")).toEqual(conversion);
    const { rows } = await h.db.query(`select revenue::text, refunded_amount::text from conversion where id = $1`, [input.id]);
    expect(rows).toEqual([{ revenue: "99999999999.9999", refunded_amount: "0.0001" }]);
  });

  it("scopes every statement to the company: the same eventId in two companies is two conversions", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const inA = await store.write(write(a, fresh("shared")));
    const inB = await store.write(write(b, fresh("shared")));
    expect(inB.outcome).toBe("recorded");
    expect(inB.conversion.id).not.toBe(inA.conversion.id);
    expect(await store.findByEventId(a, "shared")).toMatchObject({ id: inA.conversion.id });
    expect(await store.findByEventId(randomUUID(), "shared")).toBeUndefined();
  });

  it("rolls back everything when the decision throws, and records nothing when the first write is refused", async () => {
    const companyId = await h.newCompany();
    await store.write(write(companyId, fresh("e2")));
    const refused = store.write(
      write(companyId, fresh("e2"), () => {
        throw new ApiError("IDEMPOTENCY_CONFLICT", "no");
      }),
    );
    await expect(refused).rejects.toMatchObject({ code: "IDEMPOTENCY_CONFLICT" });
    const notFirst = store.write({
      ...write(companyId, fresh("e3")),
      first: () => {
        throw new ApiError("VALIDATION_ERROR", "no");
      },
    });
    await expect(notFirst).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    expect(await store.findByEventId(companyId, "e3")).toBeUndefined();
    expect(await outboxCount(companyId)).toBe(1);
  });

  it("applies concurrent adjustments one after the other, each on the previous one's result", async () => {
    const companyId = await h.newCompany();
    await store.write(write(companyId, fresh("e4", { revenue: 1_000_000n })));
    // Each write refunds 1 more than it finds: serialised, 12 writes refund 12.
    const writes = Array.from({ length: 12 }, () =>
      store.write(
        write(companyId, fresh("e4"), (current) => ({
          kind: "adjust",
          status: "refunded",
          refundedAmount: current.refundedAmount + 10_000n,
          metadata: current.metadata,
          adjustment: { amount: 10_000n, reason: "refunded" },
        })),
      ),
    );
    const results = await Promise.all(writes);
    expect(results.every((r) => r.outcome === "adjusted")).toBe(true);
    expect(await store.findByEventId(companyId, "e4")).toMatchObject({ refundedAmount: 120_000n, version: 13 });
    expect(await outboxCount(companyId)).toBe(13);
  });

  it("refuses a refund above the revenue in the schema too", async () => {
    const companyId = await h.newCompany();
    await expect(store.write(write(companyId, fresh("e5", { revenue: 1n, refundedAmount: 2n })))).rejects.toThrow(
      /conversion_refund_within_revenue/,
    );
  });
});
