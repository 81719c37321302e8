import { formatAmount } from "./amounts.ts";
import type { Adjustment, ConversionRecord, JsonObject } from "./types.ts";

/**
 * The conversion in its public JSON form: the `conversion` of the
 * `conversion.recorded` webhook event, written exactly as the REST answer
 * writes the Conversion message (camelCase names, lower-case enum names,
 * amounts as exact decimal strings, ISO 8601 UTC times with milliseconds,
 * null for an unknown value), so a receiver reads one shape everywhere.
 */
export function conversionJson(conversion: ConversionRecord): JsonObject {
  return {
    id: conversion.id,
    eventId: conversion.eventId,
    eventType: conversion.eventType,
    contactId: conversion.contactId,
    email: conversion.email,
    customerRef: conversion.customerRef,
    revenue: formatAmount(conversion.revenue),
    currency: conversion.currency,
    status: conversion.status,
    refundedAmount: formatAmount(conversion.refundedAmount),
    netRevenue: formatAmount(netRevenue(conversion)),
    occurredAt: conversion.occurredAt.toISOString(),
    metadata: conversion.metadata,
    campaignId: conversion.campaignId,
    linkId: conversion.linkId,
    clickedAt: conversion.clickedAt?.toISOString() ?? null,
    createdAt: conversion.createdAt.toISOString(),
    updatedAt: conversion.updatedAt.toISOString(),
  };
}

export function netRevenue(conversion: ConversionRecord): bigint {
  return conversion.revenue - conversion.refundedAmount;
}

/** A `conversion.recorded` outbox row, written with the change it reports. */
export interface ConversionEventDraft {
  readonly event: "conversion.recorded";
  readonly occurredAt: Date;
  readonly data: JsonObject;
  /** Unique per change (the conversion's version): the outbox records each change once. */
  readonly dedupeKey: string;
}

/**
 * The event of a change (spec: Event kinds, `conversion.recorded`:
 * "conversion; a refund also has adjustment and netRevenue"): `conversion`,
 * and for a refund or cancellation `adjustment` ({ amount newly refunded,
 * reason `refunded` or `cancelled` }) and `netRevenue`. Its time is the
 * time of the change.
 */
export function conversionEvent(conversion: ConversionRecord, adjustment: Adjustment | null): ConversionEventDraft {
  const data: JsonObject = { conversion: conversionJson(conversion) };
  if (adjustment) {
    data.adjustment = { amount: formatAmount(adjustment.amount), reason: adjustment.reason };
    data.netRevenue = formatAmount(netRevenue(conversion));
  }
  return {
    event: "conversion.recorded",
    occurredAt: conversion.updatedAt,
    data,
    dedupeKey: `conversion:${conversion.id}:v${conversion.version}`,
  };
}
