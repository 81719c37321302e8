import type { JsonObject } from "../shared/json.ts";
import type { Amount } from "./amounts.ts";

/** A JSON value as a caller wrote it (metadata; an amount written as a JSON number or string): the capabilities' one JSON type. */
export type { JsonObject, JsonValue } from "../shared/json.ts";

/** The kinds of conversion (spec: POST /mail/v1/conversions, eventType). */
export const CONVERSION_EVENT_TYPES = ["purchase", "order_confirmed", "registration", "lead", "booking"] as const;
export type ConversionEventType = (typeof CONVERSION_EVENT_TYPES)[number];

/**
 * The statuses of a conversion, in the order they can follow each other: a
 * conversion moves only forward (completed -> refunded -> cancelled), so a
 * late retry of an older write never undoes a refund.
 */
export const CONVERSION_STATUSES = ["completed", "refunded", "cancelled"] as const;
export type ConversionStatus = (typeof CONVERSION_STATUSES)[number];

/** What a write did (the answer's `outcome`). */
export const CONVERSION_OUTCOMES = ["recorded", "adjusted", "duplicate"] as const;
export type ConversionOutcome = (typeof CONVERSION_OUTCOMES)[number];

export function isConversionEventType(value: string): value is ConversionEventType {
  return (CONVERSION_EVENT_TYPES as readonly string[]).includes(value);
}

export function isConversionStatus(value: string): value is ConversionStatus {
  return (CONVERSION_STATUSES as readonly string[]).includes(value);
}

export function statusRank(status: ConversionStatus): number {
  return CONVERSION_STATUSES.indexOf(status);
}

/** How a write identifies the contact: exactly one of the three (validated). */
export type ContactRef =
  | { readonly kind: "contactId"; readonly contactId: string }
  /** The matching key of the address: checked, internationalised domain in A-label form, lower-cased. */
  | { readonly kind: "email"; readonly email: string }
  | { readonly kind: "customerRef"; readonly customerRef: string };

/** A contact of the company, as the contact directory knows it. */
export interface KnownContact {
  readonly id: string;
  /** The contact's matching key (lower-cased address). */
  readonly email: string;
}

/** The click a conversion is attributed to. */
export interface AttributedClick {
  readonly campaignId: string;
  readonly linkId: string;
  readonly occurredAt: Date;
}

/** A recorded conversion. */
export interface ConversionRecord {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: ConversionEventType;
  readonly contactId: string | null;
  readonly email: string | null;
  readonly customerRef: string | null;
  readonly revenue: Amount;
  /** ISO 4217 code, upper case. */
  readonly currency: string;
  readonly status: ConversionStatus;
  /** At most revenue; equal to it once cancelled. */
  readonly refundedAmount: Amount;
  readonly occurredAt: Date;
  readonly metadata: JsonObject;
  readonly campaignId: string | null;
  readonly linkId: string | null;
  readonly clickedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** 1 when recorded, +1 per adjustment: names each change's outbox row. */
  readonly version: number;
}

/** What an adjusting write changed: the amount newly refunded and why. */
export interface Adjustment {
  /** Added to refundedAmount by this write (may be 0 when only the status moved). */
  readonly amount: Amount;
  readonly reason: "refunded" | "cancelled";
}

/** The answer of POST /mail/v1/conversions. */
export interface RecordConversionResult {
  readonly conversion: ConversionRecord;
  readonly outcome: ConversionOutcome;
}

/** Revenue attributed to one campaign in one currency (amounts never mix currencies). */
export interface CampaignRevenue {
  readonly campaignId: string;
  readonly currency: string;
  readonly conversions: number;
  readonly gross: Amount;
  readonly refunded: Amount;
  /** gross minus refunded. */
  readonly net: Amount;
}
