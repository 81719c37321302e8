import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  type ConversionEventType as EventTypeName,
  type ConversionInput,
  type ConversionOutcome as OutcomeName,
  type ConversionRecord,
  type ConversionStatus as StatusName,
  formatAmount,
  netRevenue,
  type RecordConversionCommand,
  type RecordConversionResult,
} from "../../../capabilities/conversions/index.ts";
import { enumValueToJson } from "../../../contract/json-codec.ts";
import {
  type Conversion,
  ConversionEventType,
  ConversionEventTypeSchema,
  ConversionOutcome,
  ConversionSchema,
  ConversionStatus,
  ConversionStatusSchema,
  type RecordConversionRequest,
  type RecordConversionResponse,
  RecordConversionResponseSchema,
} from "../../../gen/mail/v1/mail_pb.js";
import { optionalTimestamp } from "../timestamps.ts";

/**
 * RecordConversion (the MailService's conversions RPC) both ways: the
 * request as the conversions capability's command, its result as the
 * contract's answer. The capability validates: this only changes the form.
 * Enums go in as their public names (an unknown number as a name the
 * validation refuses, so a gRPC caller gets the same 400 as a JSON one),
 * amounts as the JSON number or string the caller wrote
 * (google.protobuf.Value), never through a float of ours.
 */
export function recordConversionCommand(companyId: string, req: RecordConversionRequest): RecordConversionCommand {
  return { companyId, ...conversionInputFromProto(req) };
}

export function toRecordConversionResponse(result: RecordConversionResult): RecordConversionResponse {
  return create(RecordConversionResponseSchema, { conversion: toConversionProto(result.conversion), outcome: outcomeToProto(result.outcome) });
}

/** The request's fields as the capability reads them (also the contract validation's operation check). */
export function conversionInputFromProto(req: RecordConversionRequest): ConversionInput {
  return {
    eventId: req.eventId,
    eventType: enumName(ConversionEventTypeSchema, req.eventType),
    contactId: req.contactId,
    email: req.email,
    customerRef: req.customerRef,
    revenue: amountJson(req.revenue),
    currency: req.currency,
    status: req.status === undefined ? undefined : enumName(ConversionStatusSchema, req.status),
    refundedAmount: amountJson(req.refundedAmount),
    occurredAt: req.occurredAt ? dateOf(req.occurredAt) : undefined,
    metadata: req.metadata,
  };
}

function enumName(desc: typeof ConversionEventTypeSchema | typeof ConversionStatusSchema, value: number): string | undefined {
  if (value === 0) return undefined;
  return enumValueToJson(desc, value) ?? `unknown value ${value}`;
}

/** A Value as the JSON the caller wrote; JSON null is "not sent". */
function amountJson(value: Value | undefined): JsonValue | undefined {
  if (value === undefined || value.kind.case === undefined || value.kind.case === "nullValue") return undefined;
  return toJson(ValueSchema, value);
}

/** A Timestamp outside the dates JavaScript can hold is an invalid date (refused by the validation). */
function dateOf(ts: Timestamp): Date {
  return timestampDate(ts);
}

const EVENT_TYPE: Readonly<Record<EventTypeName, ConversionEventType>> = {
  purchase: ConversionEventType.PURCHASE,
  order_confirmed: ConversionEventType.ORDER_CONFIRMED,
  registration: ConversionEventType.REGISTRATION,
  lead: ConversionEventType.LEAD,
  booking: ConversionEventType.BOOKING,
};

const STATUS: Readonly<Record<StatusName, ConversionStatus>> = {
  completed: ConversionStatus.COMPLETED,
  refunded: ConversionStatus.REFUNDED,
  cancelled: ConversionStatus.CANCELLED,
};

const OUTCOME: Readonly<Record<OutcomeName, ConversionOutcome>> = {
  recorded: ConversionOutcome.RECORDED,
  adjusted: ConversionOutcome.ADJUSTED,
  duplicate: ConversionOutcome.DUPLICATE,
};

function outcomeToProto(outcome: OutcomeName): ConversionOutcome {
  return OUTCOME[outcome];
}

/** A conversion as the contract's `Conversion` (the same content as the webhook's `conversion`, view.ts). */
export function toConversionProto(record: ConversionRecord): Conversion {
  return create(ConversionSchema, {
    id: record.id,
    eventId: record.eventId,
    eventType: EVENT_TYPE[record.eventType],
    contactId: record.contactId ?? undefined,
    email: record.email ?? undefined,
    customerRef: record.customerRef ?? undefined,
    revenue: formatAmount(record.revenue),
    currency: record.currency,
    status: STATUS[record.status],
    refundedAmount: formatAmount(record.refundedAmount),
    netRevenue: formatAmount(netRevenue(record)),
    occurredAt: timestampFromDate(record.occurredAt),
    metadata: record.metadata,
    campaignId: record.campaignId ?? undefined,
    linkId: record.linkId ?? undefined,
    clickedAt: optionalTimestamp(record.clickedAt),
    createdAt: timestampFromDate(record.createdAt),
    updatedAt: timestampFromDate(record.updatedAt),
  });
}
