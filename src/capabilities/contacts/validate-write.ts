import { parsePhoneNumberFromString } from "libphonenumber-js";
import { ValidationError, type FieldProblem } from "../../contract/api-error.ts";
import { exceedsCodePoints } from "../messages/compose/text-rules.ts";
import { contactEmail } from "./email.ts";
import {
  CONTACT_STATUSES,
  isContactStatus,
  isWritableStatus,
  WRITABLE_STATUSES,
  type AttributeValue,
  type ConsentRecord,
  type ContactWrite,
  type WritableStatus,
} from "./types.ts";

/** The limits of a contact write (docs/contacts.md). Lengths are in code points. */
export const CONTACT_LIMITS = {
  firstName: 100,
  lastName: 100,
  company: 200,
  /** Longer than any E.164 number with its punctuation; longer input is not worth parsing. */
  phoneInput: 40,
  /** RFC 5646 suggests 35 for most tags; extensions can be longer. */
  locale: 64,
  attributes: 50,
  attributeKey: 40,
  attributeString: 500,
  tags: 50,
  tag: 40,
  listIds: 20,
  consentSource: 200,
  consentReference: 200,
  /** How far in the future a consent time may be (clock skew between the caller and us). */
  consentClockSkewMs: 5 * 60_000,
} as const;

/**
 * A write, validated and normalised. For the optional text fields
 * `undefined` keeps the stored value and `null` clears it (an empty string
 * was sent); attributes, tags and listIds replace the stored ones when sent.
 */
export interface ValidWrite {
  readonly email: string;
  /** The matching key of the address (email.ts). */
  readonly key: string;
  readonly firstName: string | null | undefined;
  readonly lastName: string | null | undefined;
  readonly company: string | null | undefined;
  readonly phone: string | null | undefined;
  readonly locale: string | null | undefined;
  readonly attributes: Readonly<Record<string, AttributeValue>> | undefined;
  readonly tags: readonly string[] | undefined;
  /** Distinct, lower-cased; not yet checked to exist (the store does that). */
  readonly listIds: readonly string[] | undefined;
  readonly status: WritableStatus | undefined;
  readonly consent: ValidConsent | undefined;
}

/** Consent as written; `atDefaulted` when the write sent no `at` (it is then the time of the write). */
export interface ValidConsent extends ConsentRecord {
  readonly atDefaulted: boolean;
}

/**
 * Checks every field of a write and names each bad one in a single
 * ValidationError (400 VALIDATION_ERROR). `now` is the time of the write:
 * the default consent time, and the limit a consent time may not pass.
 */
export function validateContactWrite(write: ContactWrite, now: Date): ValidWrite {
  const problems: FieldProblem[] = [];
  const problem = (field: string, text: string): undefined => {
    problems.push({ field, problem: text });
    return undefined;
  };

  let email = "";
  let key = "";
  if (write.email.trim() === "") {
    problem("email", "is required");
  } else {
    const checked = contactEmail(write.email);
    if (checked.ok) ({ email, key } = checked);
    else problem("email", checked.problem);
  }

  const firstName = optionalText(write.firstName, "firstName", CONTACT_LIMITS.firstName, problem);
  const lastName = optionalText(write.lastName, "lastName", CONTACT_LIMITS.lastName, problem);
  const company = optionalText(write.company, "company", CONTACT_LIMITS.company, problem);
  const phone = phoneOf(write.phone, problem);
  const locale = localeOf(write.locale, problem);
  const attributes = attributesOf(write.attributes, problem);
  const tags = tagsOf(write.tags, problem);
  const listIds = listIdsOf(write.listIds, problem);
  const status = statusOf(write.status, problem);
  const consent = consentOf(write.consent, now, problem);
  if (status === "subscribed" && write.consent === undefined) {
    problem("consent", "is required to set status subscribed: a contact becomes subscribed only when consent comes with the write");
  }

  if (problems.length > 0) throw new ValidationError(problems);
  return { email, key, firstName, lastName, company, phone, locale, attributes, tags, listIds, status, consent };
}

type Problem = (field: string, text: string) => undefined;

/** PostgreSQL text and jsonb cannot hold NUL: refused as a 400 rather than failed as a 500. */
function hasNul(value: string): boolean {
  return value.includes("\0");
}

/** Trimmed; an empty string clears the field (null); undefined keeps it. */
function optionalText(value: string | undefined, field: string, max: number, problem: Problem): string | null | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return null;
  if (hasNul(trimmed)) return problem(field, "must not contain NUL characters");
  if (exceedsCodePoints(trimmed, max)) return problem(field, `must be at most ${max} characters`);
  return trimmed;
}

function phoneOf(value: string | undefined, problem: Problem): string | null | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return null;
  const invalid = "must be a valid phone number in international form (E.164), e.g. +14155550123";
  if (trimmed.length > CONTACT_LIMITS.phoneInput) return problem("phone", invalid);
  // No default country: a number without its country code is ambiguous.
  const parsed = parsePhoneNumberFromString(trimmed);
  if (!parsed?.isValid()) return problem("phone", invalid);
  return parsed.number;
}

function localeOf(value: string | undefined, problem: Problem): string | null | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return null;
  const invalid = "must be a BCP 47 language tag, e.g. en-GB";
  if (trimmed.length > CONTACT_LIMITS.locale) return problem("locale", invalid);
  try {
    const [canonical] = Intl.getCanonicalLocales(trimmed);
    return canonical ?? problem("locale", invalid);
  } catch {
    return problem("locale", invalid);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function attributesOf(value: ContactWrite["attributes"], problem: Problem): Record<string, AttributeValue> | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return problem("attributes", "must be an object");
  const entries = Object.entries(value);
  let ok = true;
  if (entries.length > CONTACT_LIMITS.attributes) {
    ok = false;
    problem("attributes", `must have at most ${CONTACT_LIMITS.attributes} keys`);
  }
  const out: Record<string, AttributeValue> = {};
  for (const [name, item] of entries) {
    const field = `attributes.${name}`;
    if (name === "" || exceedsCodePoints(name, CONTACT_LIMITS.attributeKey) || hasNul(name)) {
      ok = false;
      problem(field, `key must be 1 to ${CONTACT_LIMITS.attributeKey} characters, without NUL`);
      continue;
    }
    if (typeof item === "string") {
      if (exceedsCodePoints(item, CONTACT_LIMITS.attributeString)) {
        ok = false;
        problem(field, `must be at most ${CONTACT_LIMITS.attributeString} characters`);
      } else if (hasNul(item)) {
        ok = false;
        problem(field, "must not contain NUL characters");
      } else {
        out[name] = item;
      }
    } else if ((typeof item === "number" && Number.isFinite(item)) || typeof item === "boolean" || item === null) {
      out[name] = item;
    } else {
      ok = false;
      problem(field, "must be a string, number, boolean or null (attributes are flat)");
    }
  }
  return ok ? out : undefined;
}

/** Distinct tags in the order first written. */
function tagsOf(value: readonly unknown[] | undefined, problem: Problem): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return problem("tags", "must be an array of strings");
  const tags: string[] = [];
  let ok = true;
  value.forEach((tag: unknown, i) => {
    const field = `tags[${i}]`;
    if (typeof tag !== "string") {
      ok = false;
      problem(field, "must be a string");
    } else if (tag.trim() === "" || exceedsCodePoints(tag, CONTACT_LIMITS.tag) || hasNul(tag)) {
      ok = false;
      problem(field, `must be 1 to ${CONTACT_LIMITS.tag} characters, not blank, without NUL`);
    } else if (!tags.includes(tag)) {
      tags.push(tag);
    }
  });
  if (tags.length > CONTACT_LIMITS.tags) {
    ok = false;
    problem("tags", `must have at most ${CONTACT_LIMITS.tags} distinct tags`);
  }
  return ok ? tags : undefined;
}

function listIdsOf(value: readonly unknown[] | undefined, problem: Problem): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return problem("listIds", "must be an array of list ids");
  if (value.length > CONTACT_LIMITS.listIds) return problem("listIds", `must have at most ${CONTACT_LIMITS.listIds} entries`);
  const ids: string[] = [];
  let ok = true;
  value.forEach((id: unknown, i) => {
    if (typeof id !== "string" || id === "") {
      ok = false;
      problem(`listIds[${i}]`, "must be a list id");
    } else {
      const lower = id.toLowerCase();
      if (!ids.includes(lower)) ids.push(lower);
    }
  });
  return ok ? ids : undefined;
}

function statusOf(value: string | undefined, problem: Problem): WritableStatus | undefined {
  if (value === undefined) return undefined;
  if (isWritableStatus(value)) return value;
  if (isContactStatus(value)) {
    return problem("status", `${value} is set by the service only; a write may ask for ${WRITABLE_STATUSES.join(", ")}`);
  }
  return problem("status", `must be one of ${WRITABLE_STATUSES.join(", ")} (known statuses: ${CONTACT_STATUSES.join(", ")})`);
}

function consentOf(value: ContactWrite["consent"], now: Date, problem: Problem): ValidConsent | undefined {
  if (value === undefined) return undefined;
  let ok = true;
  const source = value.source?.trim() ?? "";
  if (source === "") {
    ok = false;
    problem("consent.source", "is required");
  } else if (exceedsCodePoints(source, CONTACT_LIMITS.consentSource) || hasNul(source)) {
    ok = false;
    problem("consent.source", `must be at most ${CONTACT_LIMITS.consentSource} characters, without NUL`);
  }
  let at = now;
  if (value.at !== undefined) {
    if (!Number.isFinite(value.at.getTime())) {
      ok = false;
      problem("consent.at", "must be an ISO 8601 date-time");
    } else if (value.at.getTime() > now.getTime() + CONTACT_LIMITS.consentClockSkewMs) {
      ok = false;
      problem("consent.at", "must not be in the future");
    } else {
      at = value.at;
    }
  }
  const reference = value.reference?.trim() ?? "";
  if (exceedsCodePoints(reference, CONTACT_LIMITS.consentReference) || hasNul(reference)) {
    ok = false;
    problem("consent.reference", `must be at most ${CONTACT_LIMITS.consentReference} characters, without NUL`);
  }
  return ok ? { source, at, reference: reference === "" ? null : reference, atDefaulted: value.at === undefined } : undefined;
}
