import { describe, expect, it } from "vitest";
import { type FieldProblem, ValidationError } from "../../../src/contract/api-error.ts";
import { type ConversionInput, validateConversion } from "../../../src/capabilities/conversions/index.ts";

const NOW = new Date("2026-03-01T12:00:00.000Z");
const MINIMAL: ConversionInput = { eventId: "order-1001", eventType: "purchase", email: "Ada@Example.COM" };

function problems(input: ConversionInput): readonly FieldProblem[] {
  try {
    validateConversion(input, NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).fields;
  }
  throw new Error("expected a ValidationError");
}

describe("validateConversion", () => {
  it("normalises a valid write and leaves what was not sent undefined", () => {
    expect(validateConversion({ ...MINIMAL, revenue: "49.95", currency: "eur", status: "completed" }, NOW)).toEqual({
      eventId: "order-1001",
      eventType: "purchase",
      contact: { kind: "email", email: "ada@example.com" },
      revenue: 499_500n,
      currency: "EUR",
      status: "completed",
      refundedAmount: undefined,
      occurredAt: undefined,
      metadata: undefined,
    });
    expect(validateConversion({ eventId: "e", eventType: "lead", contactId: "0B0F4C1E-1111-4222-8333-444455556666" }, NOW).contact).toEqual({
      kind: "contactId",
      contactId: "0b0f4c1e-1111-4222-8333-444455556666",
    });
    expect(validateConversion({ eventId: "e", eventType: "booking", customerRef: "cus_42" }, NOW).contact).toEqual({
      kind: "customerRef",
      customerRef: "cus_42",
    });
  });

  it("names every bad field in one VALIDATION_ERROR", () => {
    const found = problems({
      eventId: "",
      eventType: "sale",
      contactId: "not-a-uuid",
      email: "ada@example.com",
      revenue: -5,
      currency: "euro",
      status: "paid",
      refundedAmount: "1.23456",
      occurredAt: new Date(NOW.getTime() + 25 * 3_600_000),
      metadata: { note: "x".repeat(9_000) },
    });
    expect(found.map((p) => p.field)).toEqual([
      "eventId",
      "eventType",
      "contactId, email, customerRef",
      "revenue",
      "currency",
      "status",
      "refundedAmount",
      "occurredAt",
      "metadata",
    ]);
    expect(found.find((p) => p.field === "eventType")?.problem).toBe("must be one of purchase, order_confirmed, registration, lead, booking");
    expect(found.find((p) => p.field === "status")?.problem).toBe("must be one of completed, refunded, cancelled");
    expect(found.find((p) => p.field === "contactId, email, customerRef")?.problem).toMatch(/exactly one .*got contactId, email/);
  });

  it("requires exactly one of contactId, email and customerRef, and checks the one sent", () => {
    expect(problems({ eventId: "e", eventType: "lead" })).toEqual([
      { field: "contactId, email, customerRef", problem: "send exactly one of contactId, email and customerRef to identify the contact" },
    ]);
    expect(problems({ eventId: "e", eventType: "lead", email: "ada@example.com", customerRef: "c" }).map((p) => p.field)).toEqual([
      "contactId, email, customerRef",
    ]);
    expect(problems({ eventId: "e", eventType: "lead", contactId: "42" })).toEqual([{ field: "contactId", problem: "must be a contact id (UUID)" }]);
    expect(problems({ eventId: "e", eventType: "lead", email: "not an address" }).map((p) => p.field)).toEqual(["email"]);
    expect(problems({ eventId: "e", eventType: "lead", customerRef: "" })).toEqual([{ field: "customerRef", problem: "is required" }]);
    expect(problems({ eventId: "e", eventType: "lead", customerRef: "c".repeat(201) })).toEqual([
      { field: "customerRef", problem: "must be at most 200 characters" },
    ]);
  });

  it("checks eventId: 1 to 200 characters of plain text", () => {
    expect(problems({ ...MINIMAL, eventId: "e".repeat(201) })).toEqual([{ field: "eventId", problem: "must be at most 200 characters" }]);
    expect(problems({ ...MINIMAL, eventId: "a\u0000b" })).toEqual([{ field: "eventId", problem: "must not contain control characters" }]);
    expect(problems({ ...MINIMAL, eventId: " order-1" })).toEqual([{ field: "eventId", problem: "must not start or end with spaces" }]);
    expect(validateConversion({ ...MINIMAL, eventId: "é".repeat(200) }, NOW).eventId).toHaveLength(200);
  });

  it("refuses a refund larger than the revenue when both are sent", () => {
    expect(problems({ ...MINIMAL, revenue: "10", refundedAmount: "10.01" })).toEqual([
      { field: "refundedAmount", problem: "must not exceed revenue" },
    ]);
    expect(validateConversion({ ...MINIMAL, revenue: "10", refundedAmount: 10 }, NOW).refundedAmount).toBe(100_000n);
  });

  it("takes JSON null amounts as not sent", () => {
    const out = validateConversion({ ...MINIMAL, revenue: null, refundedAmount: null }, NOW);
    expect(out.revenue).toBeUndefined();
    expect(out.refundedAmount).toBeUndefined();
  });

  it("bounds occurredAt to 24 hours ahead, and metadata to 8 KB of storable JSON", () => {
    expect(validateConversion({ ...MINIMAL, occurredAt: new Date(NOW.getTime() + 23 * 3_600_000) }, NOW).occurredAt).toBeInstanceOf(Date);
    expect(problems({ ...MINIMAL, occurredAt: new Date(Number.NaN) })).toEqual([{ field: "occurredAt", problem: "must be an ISO 8601 date-time" }]);
    const justFits = { n: "x".repeat(8_192 - JSON.stringify({ n: "" }).length) };
    expect(validateConversion({ ...MINIMAL, metadata: justFits }, NOW).metadata).toEqual(justFits);
    expect(problems({ ...MINIMAL, metadata: { n: `${justFits.n}x` } })).toEqual([{ field: "metadata", problem: "must be at most 8192 bytes as JSON" }]);
    // Counted in UTF-8 bytes, not characters.
    expect(problems({ ...MINIMAL, metadata: { n: "é".repeat(4_096) } }).map((p) => p.field)).toEqual(["metadata"]);
    expect(problems({ ...MINIMAL, metadata: { nested: ["a\u0000"] } }).map((p) => p.field)).toEqual(["metadata"]);
    expect(problems({ ...MINIMAL, metadata: { ["\uD800"]: 1 } }).map((p) => p.field)).toEqual(["metadata"]);
  });
});
