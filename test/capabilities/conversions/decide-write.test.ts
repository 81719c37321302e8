import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/contract/api-error.ts";
import {
  type ConversionInput,
  type ConversionRecord,
  firstWrite,
  laterWrite,
  validateConversion,
} from "../../../src/capabilities/conversions/index.ts";

const NOW = new Date("2026-03-01T12:00:00.000Z");
const BASE: ConversionInput = { eventId: "order-1", eventType: "purchase", email: "ada@example.com" };

function valid(extra: Partial<ConversionInput> = {}) {
  return validateConversion({ ...BASE, ...extra }, NOW);
}

/** A stored conversion as the first write of `extra` records it. */
function stored(extra: Partial<ConversionInput> = {}): ConversionRecord {
  const first = firstWrite(valid(extra), NOW);
  return {
    id: "c1",
    eventId: "order-1",
    eventType: "purchase",
    contactId: null,
    email: "ada@example.com",
    customerRef: null,
    revenue: first.revenue,
    currency: first.currency,
    status: first.status,
    refundedAmount: first.refundedAmount,
    occurredAt: first.occurredAt,
    metadata: first.metadata,
    campaignId: null,
    linkId: null,
    clickedAt: null,
    createdAt: NOW,
    updatedAt: NOW,
    version: 1,
  };
}

function conflict(current: ConversionRecord, extra: Partial<ConversionInput>): string {
  try {
    laterWrite(current, valid(extra));
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("IDEMPOTENCY_CONFLICT");
    return (error as ApiError).message;
  }
  throw new Error("expected a conflict");
}

describe("the first write of an eventId", () => {
  it("fills in the defaults: revenue 0, USD, completed, now, {}", () => {
    expect(firstWrite(valid(), NOW)).toEqual({
      revenue: 0n,
      currency: "USD",
      status: "completed",
      refundedAmount: 0n,
      occurredAt: NOW,
      metadata: {},
      adjustment: null,
    });
  });

  it("refunds the whole revenue for `refunded` without an amount, and for `cancelled` whatever the amount", () => {
    expect(firstWrite(valid({ revenue: "50", status: "refunded" }), NOW)).toMatchObject({
      refundedAmount: 500_000n,
      adjustment: { amount: 500_000n, reason: "refunded" },
    });
    expect(firstWrite(valid({ revenue: "50", status: "refunded", refundedAmount: "20" }), NOW).refundedAmount).toBe(200_000n);
    expect(firstWrite(valid({ revenue: "50", status: "cancelled", refundedAmount: "0" }), NOW)).toMatchObject({
      refundedAmount: 500_000n,
      adjustment: { amount: 500_000n, reason: "cancelled" },
    });
  });

  it("refuses a refund above the revenue it defaults to", () => {
    expect(() => firstWrite(valid({ refundedAmount: "1" }), NOW)).toThrow(/refundedAmount: must not exceed revenue \(0\)/);
  });
});

describe("a later write of the eventId", () => {
  it("is a duplicate when it says nothing new (fields left out are not compared)", () => {
    const current = stored({ revenue: "49.95", currency: "EUR", metadata: { order: 1 } });
    expect(laterWrite(current, valid({ revenue: 49.95, currency: "eur", metadata: { order: 1 } }))).toEqual({ kind: "duplicate" });
    expect(laterWrite(current, valid())).toEqual({ kind: "duplicate" });
    // Metadata alone is not a change.
    expect(laterWrite(current, valid({ metadata: { order: 2 } }))).toEqual({ kind: "duplicate" });
  });

  it("refunds: the whole revenue by default, or the amount sent, which only grows", () => {
    const current = stored({ revenue: "50" });
    expect(laterWrite(current, valid({ status: "refunded", metadata: { why: "damaged" } }))).toEqual({
      kind: "adjust",
      status: "refunded",
      refundedAmount: 500_000n,
      metadata: { why: "damaged" },
      adjustment: { amount: 500_000n, reason: "refunded" },
    });
    const partial = laterWrite(current, valid({ status: "refunded", refundedAmount: "10" }));
    expect(partial).toMatchObject({ kind: "adjust", status: "refunded", refundedAmount: 100_000n, adjustment: { amount: 100_000n } });
    // A partial refund may be written with status completed too.
    expect(laterWrite(current, valid({ refundedAmount: "5" }))).toMatchObject({ kind: "adjust", status: "completed", refundedAmount: 50_000n });

    const refunded10 = { ...current, status: "refunded" as const, refundedAmount: 100_000n };
    expect(laterWrite(refunded10, valid({ status: "refunded", refundedAmount: "25" }))).toMatchObject({
      kind: "adjust",
      refundedAmount: 250_000n,
      adjustment: { amount: 150_000n, reason: "refunded" },
    });
    // A late retry of the smaller refund, or of the original write, changes nothing.
    expect(laterWrite(refunded10, valid({ status: "refunded", refundedAmount: "5" }))).toEqual({ kind: "duplicate" });
    expect(laterWrite(refunded10, valid({ status: "completed" }))).toEqual({ kind: "duplicate" });
    expect(laterWrite(refunded10, valid({ revenue: "50" }))).toEqual({ kind: "duplicate" });
  });

  it("cancels: the whole revenue is reversed, once", () => {
    const refunded10 = { ...stored({ revenue: "50" }), status: "refunded" as const, refundedAmount: 100_000n };
    const cancelled = laterWrite(refunded10, valid({ status: "cancelled" }));
    expect(cancelled).toMatchObject({
      kind: "adjust",
      status: "cancelled",
      refundedAmount: 500_000n,
      adjustment: { amount: 400_000n, reason: "cancelled" },
    });
    const done = { ...refunded10, status: "cancelled" as const, refundedAmount: 500_000n };
    expect(laterWrite(done, valid({ status: "cancelled" }))).toEqual({ kind: "duplicate" });
    expect(laterWrite(done, valid({ status: "refunded", refundedAmount: "1" }))).toEqual({ kind: "duplicate" });
  });

  it("refuses to refund more than the stored revenue", () => {
    expect(() => laterWrite(stored({ revenue: "50" }), valid({ status: "refunded", refundedAmount: "50.0001" }))).toThrow(
      /refundedAmount: must not exceed revenue \(50\)/,
    );
  });

  it("answers IDEMPOTENCY_CONFLICT naming each fixed field it contradicts", () => {
    const current = stored({ revenue: "50", currency: "EUR", occurredAt: new Date("2026-02-01T00:00:00Z") });
    expect(conflict(current, { revenue: "60", currency: "USD", eventType: "booking" })).toMatch(/another eventType, revenue, currency:/);
    expect(conflict(current, { occurredAt: new Date("2026-02-02T00:00:00Z") })).toMatch(/another occurredAt/);
    expect(conflict(current, { email: "bob@example.com" })).toMatch(/another email/);
    // Even when it also refunds: nothing changes.
    expect(conflict(current, { revenue: "60", status: "refunded" })).toMatch(/another revenue/);
  });
});
