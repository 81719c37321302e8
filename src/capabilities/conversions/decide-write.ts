import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { type Amount, formatAmount, maxAmount, ZERO } from "./amounts.ts";
import type { ValidConversion } from "./validate-conversion.ts";
import { DEFAULT_CURRENCY } from "./validate-conversion.ts";
import { type Adjustment, type ConversionRecord, type ConversionStatus, type JsonObject, statusRank } from "./types.ts";

/**
 * The rules of a conversion write, pure (no I/O): what the first write of an
 * eventId records, and what a later write of it does to the stored
 * conversion. docs/conversions.md tells the same rules to callers.
 *
 * - The first write records the conversion (`recorded`) with the defaults:
 *   revenue 0, currency USD, status completed, occurredAt now, metadata {}.
 * - eventType, the contact, revenue, currency and occurredAt are fixed by
 *   the first write. A later write that sends a different value for one of
 *   them is a different conversion under a reused id: 409
 *   IDEMPOTENCY_CONFLICT naming the fields (a field left out is not
 *   compared).
 * - A later write may refund or cancel: status moves only forward
 *   (completed -> refunded -> cancelled) and refundedAmount only grows, so
 *   a late retry of an older write changes nothing (`duplicate`) instead of
 *   undoing a refund. `refunded` without refundedAmount refunds the whole
 *   revenue; `cancelled` reverses the whole revenue (refundedAmount becomes
 *   revenue, netRevenue 0). Such a change is `adjusted`; metadata sent with
 *   it replaces the stored metadata.
 * - Anything else is `duplicate`: nothing changes (metadata sent with it is
 *   not applied either).
 */

/** The values the first write of an eventId records. */
export interface FirstWrite {
  readonly revenue: Amount;
  readonly currency: string;
  readonly status: ConversionStatus;
  readonly refundedAmount: Amount;
  readonly occurredAt: Date;
  readonly metadata: JsonObject;
  /** The refund the write already carries (status refunded or cancelled, or a refundedAmount); null: none. */
  readonly adjustment: Adjustment | null;
}

export function firstWrite(write: ValidConversion, now: Date): FirstWrite {
  const revenue = write.revenue ?? ZERO;
  const status = write.status ?? "completed";
  const refundedAmount = requestedRefund(status, write.refundedAmount, revenue);
  if (refundedAmount > revenue) {
    throw new ValidationError([{ field: "refundedAmount", problem: `must not exceed revenue (${formatAmount(revenue)})` }]);
  }
  return {
    revenue,
    currency: write.currency ?? DEFAULT_CURRENCY,
    status,
    refundedAmount,
    occurredAt: write.occurredAt ?? now,
    metadata: write.metadata ?? {},
    adjustment: status !== "completed" || refundedAmount > ZERO ? { amount: refundedAmount, reason: reasonFor(status) } : null,
  };
}

/** What a later write of an eventId does to the stored conversion. */
export type LaterWrite =
  | { readonly kind: "duplicate" }
  | {
      readonly kind: "adjust";
      readonly status: ConversionStatus;
      readonly refundedAmount: Amount;
      readonly metadata: JsonObject;
      readonly adjustment: Adjustment;
    };

/**
 * Decides a later write against the stored conversion (the store holds its
 * row lock while this runs). Throws 409 IDEMPOTENCY_CONFLICT when the write
 * contradicts a fixed field, 400 VALIDATION_ERROR when it would refund more
 * than the revenue.
 */
export function laterWrite(current: ConversionRecord, write: ValidConversion): LaterWrite {
  const conflicts = conflictingFields(current, write);
  if (conflicts.length > 0) {
    throw new ApiError(
      "IDEMPOTENCY_CONFLICT",
      `eventId ${JSON.stringify(current.eventId)} was recorded with another ${conflicts.join(", ")}: ` +
        "after the first write only status, refundedAmount and metadata may change.",
    );
  }
  if (write.refundedAmount !== undefined && write.refundedAmount > current.revenue) {
    throw new ValidationError([{ field: "refundedAmount", problem: `must not exceed revenue (${formatAmount(current.revenue)})` }]);
  }

  // A write without status is the original one (completed) again.
  const requestedStatus = write.status ?? "completed";
  const status = statusRank(requestedStatus) > statusRank(current.status) ? requestedStatus : current.status;
  const refundedAmount =
    status === "cancelled" ? current.revenue : maxAmount(current.refundedAmount, requestedRefund(requestedStatus, write.refundedAmount, current.revenue));

  if (status === current.status && refundedAmount === current.refundedAmount) return { kind: "duplicate" };
  return {
    kind: "adjust",
    status,
    refundedAmount,
    metadata: write.metadata ?? current.metadata,
    adjustment: {
      amount: refundedAmount - current.refundedAmount,
      reason: status === "cancelled" && current.status !== "cancelled" ? "cancelled" : "refunded",
    },
  };
}

/** The refundedAmount a write asks for: the whole revenue when cancelled, or refunded without an amount. */
function requestedRefund(status: ConversionStatus, refundedAmount: Amount | undefined, revenue: Amount): Amount {
  if (status === "cancelled") return revenue;
  if (refundedAmount !== undefined) return refundedAmount;
  return status === "refunded" ? revenue : ZERO;
}

function reasonFor(status: ConversionStatus): Adjustment["reason"] {
  return status === "cancelled" ? "cancelled" : "refunded";
}

/** The fixed fields the write sends with another value than the stored conversion, by their JSON names. */
function conflictingFields(current: ConversionRecord, write: ValidConversion): string[] {
  const fields: string[] = [];
  if (write.eventType !== current.eventType) fields.push("eventType");
  const contact = write.contact;
  if (contact.kind === "contactId" && current.contactId !== null && contact.contactId !== current.contactId) fields.push("contactId");
  if (contact.kind === "email" && current.email !== null && contact.email !== current.email) fields.push("email");
  if (contact.kind === "customerRef" && current.customerRef !== null && contact.customerRef !== current.customerRef) {
    fields.push("customerRef");
  }
  if (write.revenue !== undefined && write.revenue !== current.revenue) fields.push("revenue");
  if (write.currency !== undefined && write.currency !== current.currency) fields.push("currency");
  if (write.occurredAt !== undefined && write.occurredAt.getTime() !== current.occurredAt.getTime()) fields.push("occurredAt");
  return fields;
}
