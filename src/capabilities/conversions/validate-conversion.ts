import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { checkEmailAddress } from "../messages/compose/email-address.ts";
import { exceedsCodePoints, hasControlCharacter } from "../messages/compose/text-rules.ts";
import { type Amount, parseAmount } from "./amounts.ts";
import {
  CONVERSION_EVENT_TYPES,
  CONVERSION_STATUSES,
  type ContactRef,
  type ConversionEventType,
  type ConversionStatus,
  isConversionEventType,
  isConversionStatus,
  type JsonObject,
  type JsonValue,
} from "./types.ts";

/** The limits of a conversion write (docs/conversions.md). Lengths are in code points. */
export const CONVERSION_LIMITS = {
  eventId: 200,
  customerRef: 200,
  /** Serialised metadata, in UTF-8 bytes. */
  metadataBytes: 8 * 1024,
  /** How far in the future occurredAt may be (clock skew, time zones written wrongly). */
  futureOccurredAtMs: 24 * 60 * 60_000,
} as const;

export const DEFAULT_CURRENCY = "USD";

/**
 * A conversion write as the transport hands it over: the request's fields
 * in their JSON form, `undefined` for a field not sent. Enums arrive as
 * their public names (anything else is refused here), amounts as the JSON
 * number or string the caller wrote.
 */
export interface ConversionInput {
  readonly eventId: string;
  readonly eventType: string | undefined;
  readonly contactId?: string | undefined;
  readonly email?: string | undefined;
  readonly customerRef?: string | undefined;
  readonly revenue?: JsonValue | undefined;
  readonly currency?: string | undefined;
  readonly status?: string | undefined;
  readonly refundedAmount?: JsonValue | undefined;
  readonly occurredAt?: Date | undefined;
  readonly metadata?: JsonObject | undefined;
}

/**
 * A valid write, normalised. Fields the caller did not send stay
 * `undefined`: a first write fills in the defaults, a later write of the
 * same eventId compares only what it sent (decide-write.ts).
 */
export interface ValidConversion {
  readonly eventId: string;
  readonly eventType: ConversionEventType;
  readonly contact: ContactRef;
  readonly revenue: Amount | undefined;
  /** Upper case. */
  readonly currency: string | undefined;
  readonly status: ConversionStatus | undefined;
  readonly refundedAmount: Amount | undefined;
  readonly occurredAt: Date | undefined;
  readonly metadata: JsonObject | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A contact id's shape (a UUID, any case). */
export function isContactId(value: string): boolean {
  return UUID.test(value);
}
const IDENTIFIERS = ["contactId", "email", "customerRef"] as const;

/**
 * Validates a conversion write. Every rule is checked and all problems are
 * reported in one ValidationError (400 VALIDATION_ERROR naming each field),
 * so a caller fixes a request in one round trip. Pure: whether a contactId
 * is a contact of the company is checked later (404 NOT_FOUND).
 */
export function validateConversion(input: ConversionInput, now: Date): ValidConversion {
  const problems: FieldProblem[] = [];
  const report = (field: string, problem: string): undefined => {
    problems.push({ field, problem });
    return undefined;
  };

  const eventId = checkText("eventId", input.eventId, CONVERSION_LIMITS.eventId, report);

  let eventType: ConversionEventType | undefined;
  if (input.eventType === undefined || input.eventType === "") report("eventType", "is required");
  else if (isConversionEventType(input.eventType)) eventType = input.eventType;
  else report("eventType", `must be one of ${CONVERSION_EVENT_TYPES.join(", ")}`);

  const contact = checkContact(input, report);

  const revenue = input.revenue === undefined || input.revenue === null ? undefined : amountOf("revenue", input.revenue, report);

  let currency: string | undefined;
  if (input.currency !== undefined) {
    if (/^[A-Za-z]{3}$/.test(input.currency)) currency = input.currency.toUpperCase();
    else report("currency", "must be three letters (an ISO 4217 code such as USD)");
  }

  let status: ConversionStatus | undefined;
  if (input.status !== undefined) {
    if (isConversionStatus(input.status)) status = input.status;
    else report("status", `must be one of ${CONVERSION_STATUSES.join(", ")}`);
  }

  const refundedAmount =
    input.refundedAmount === undefined || input.refundedAmount === null ? undefined : amountOf("refundedAmount", input.refundedAmount, report);
  if (revenue !== undefined && refundedAmount !== undefined && refundedAmount > revenue) {
    report("refundedAmount", "must not exceed revenue");
  }

  if (input.occurredAt !== undefined) {
    if (Number.isNaN(input.occurredAt.getTime())) report("occurredAt", "must be an ISO 8601 date-time");
    else if (input.occurredAt.getTime() > now.getTime() + CONVERSION_LIMITS.futureOccurredAtMs) {
      report("occurredAt", "must not be more than 24 hours in the future");
    }
  }

  if (input.metadata !== undefined) {
    if (typeof input.metadata !== "object" || input.metadata === null || Array.isArray(input.metadata)) {
      report("metadata", "must be a JSON object");
    } else {
      const json = JSON.stringify(input.metadata);
      if (Buffer.byteLength(json, "utf8") > CONVERSION_LIMITS.metadataBytes) {
        report("metadata", `must be at most ${CONVERSION_LIMITS.metadataBytes} bytes as JSON`);
      } else if (containsUnstorableText(input.metadata)) {
        // PostgreSQL's jsonb holds neither the NUL character nor half of a surrogate pair.
        report("metadata", "must not contain the NUL character or unpaired surrogates");
      }
    }
  }

  if (problems.length > 0 || eventId === undefined || eventType === undefined || contact === undefined) {
    throw new ValidationError(problems);
  }
  return {
    eventId,
    eventType,
    contact,
    revenue,
    currency,
    status,
    refundedAmount,
    occurredAt: input.occurredAt,
    metadata: input.metadata,
  };
}

type Report = (field: string, problem: string) => undefined;

function checkText(field: string, value: string | undefined, max: number, report: Report): string | undefined {
  if (value === undefined || value === "") return report(field, "is required");
  if (exceedsCodePoints(value, max)) return report(field, `must be at most ${max} characters`);
  if (hasControlCharacter(value)) return report(field, "must not contain control characters");
  if (LONE_SURROGATE.test(value)) return report(field, "must be valid Unicode text");
  if (value.trim() !== value) return report(field, "must not start or end with spaces");
  return value;
}

function amountOf(field: string, value: JsonValue, report: Report): Amount | undefined {
  const parsed = parseAmount(value);
  return parsed.ok ? parsed.amount : report(field, parsed.problem);
}

/** Exactly one of contactId, email and customerRef, each checked in its own way. */
function checkContact(input: ConversionInput, report: Report): ContactRef | undefined {
  const sent = IDENTIFIERS.filter((name) => input[name] !== undefined);
  if (sent.length !== 1) {
    const problem =
      sent.length === 0
        ? "send exactly one of contactId, email and customerRef to identify the contact"
        : `send exactly one of contactId, email and customerRef (got ${sent.join(", ")})`;
    return report(IDENTIFIERS.join(", "), problem);
  }
  if (input.contactId !== undefined) {
    if (!isContactId(input.contactId)) return report("contactId", "must be a contact id (UUID)");
    return { kind: "contactId", contactId: input.contactId.toLowerCase() };
  }
  if (input.email !== undefined) {
    // The contacts' matching key: the checked address, lower-cased as a whole.
    const check = checkEmailAddress(input.email.trim());
    if (!check.ok) return report("email", check.problem);
    return { kind: "email", email: check.address.toLowerCase() };
  }
  const customerRef = checkText("customerRef", input.customerRef, CONVERSION_LIMITS.customerRef, report);
  return customerRef === undefined ? undefined : { kind: "customerRef", customerRef };
}

/** Whether a key or string anywhere in `value` holds the NUL character or a lone surrogate. */
function containsUnstorableText(value: JsonValue): boolean {
  if (typeof value === "string") return unstorable(value);
  if (Array.isArray(value)) return value.some(containsUnstorableText);
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).some(([key, inner]) => unstorable(key) || containsUnstorableText(inner));
  }
  return false;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unstorable(text: string): boolean {
  return text.includes("\0") || LONE_SURROGATE.test(text);
}
