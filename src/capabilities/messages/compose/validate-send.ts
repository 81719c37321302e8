import { ValidationError, type FieldProblem } from "../../../contract/api-error.ts";
import { type IdempotencyKey, readSendKey } from "../../idempotency/index.ts";
import type { JsonObject, JsonValue } from "../../shared/json.ts";
import type { SendCommand } from "../accept/types.ts";
import { type ValidatedAttachment, validateAttachments } from "./attachments.ts";
import { checkEmailAddress } from "./email-address.ts";
import type { VariableValue } from "./template.ts";
import { SEND_LIMITS } from "./send-limits.ts";
import { exceedsCodePoints, hasControlCharacter, hasLineBreak, hasNul } from "./text-rules.ts";

/**
 * Validation of a send (POST /mail/v1/send, gRPC SendMessage, the service's
 * own mail) before anything is looked up or stored. Pure: no I/O, so
 * whether a template or sender exists is checked later (404 NOT_FOUND), not here.
 *
 * Every rule is checked and all problems are reported in one
 * ValidationError, so a caller fixes a request in one round trip (spec:
 * "message names each field"). Field names are the JSON names the caller
 * wrote (`to.email`, `variables.<key>`, `tags.<key>`). The idempotency key
 * (the body's or the header's, capabilities/idempotency readSendKey) is
 * checked here too, and its problems listed first.
 *
 * Lengths are counted in Unicode code points (see text-rules.ts). No text
 * that is stored (or rendered into what is stored) may hold U+0000, which
 * PostgreSQL text cannot: it is refused here, naming the field.
 */


export interface ValidatedRecipient {
  /** Normalised address: domain lower-cased (IDN in A-label form). */
  readonly email: string;
  /** Display name; omitted when absent or empty. */
  readonly name?: string;
}

export interface ValidatedSend {
  readonly to: ValidatedRecipient;
  readonly templateId?: string;
  /** Always an object; `{}` when none were sent. */
  readonly variables: Readonly<Record<string, VariableValue>>;
  readonly subject?: string;
  readonly html?: string;
  readonly text?: string;
  readonly senderId?: string;
  /** Normalised like `to.email`. */
  readonly replyTo?: string;
  readonly tags: Readonly<Record<string, string>>;
  /** The effective key: the body's `idempotencyKey`, else the header's (readSendKey). */
  readonly idempotencyKey?: IdempotencyKey;
  /** The files sent with it (attachments.ts); absent when none were sent. */
  readonly attachments?: readonly ValidatedAttachment[];
}

/**
 * Validates a send and returns its normalised form, or throws one
 * ValidationError listing every bad field.
 *
 * When `templateId` is given, `subject`/`html`/`text` may still be sent; they
 * are validated the same way and passed on, and the composing step decides
 * how they combine with the template.
 */
export function validateSend(req: SendCommand): ValidatedSend {
  const key = readSendKey(req.idempotencyKeyHeader, req.idempotencyKey);
  const problems: FieldProblem[] = [...key.problems];
  const report = (field: string, problem: string): void => {
    problems.push({ field, problem });
  };

  const to = validateRecipient(req.to, report);
  const content = validateContent(req, report);
  const variables = validateVariables(req.variables, report);
  const tags = validateTags(req.tags, report);
  const attachments = validateAttachments(req.attachments, report);
  const idempotencyKey = key.key;

  let senderId: string | undefined;
  if (req.senderId !== undefined) {
    if (req.senderId.trim() === "") report("senderId", "must not be empty");
    else if (hasNul(req.senderId)) report("senderId", NO_NUL);
    else senderId = req.senderId;
  }

  let replyTo: string | undefined;
  if (req.replyTo !== undefined) {
    const checked = checkEmailAddress(req.replyTo);
    if (checked.ok) replyTo = checked.address;
    else report("replyTo", checked.problem);
  }

  if (problems.length > 0 || to === undefined) {
    // `to === undefined` always comes with a problem; the check narrows the type.
    throw new ValidationError(problems);
  }

  return {
    to,
    variables,
    tags,
    ...defined("attachments", attachments.length > 0 ? attachments : undefined),
    ...defined("templateId", content.templateId),
    ...defined("subject", content.subject),
    ...defined("html", content.html),
    ...defined("text", content.text),
    ...defined("senderId", senderId),
    ...defined("replyTo", replyTo),
    ...defined("idempotencyKey", idempotencyKey),
  };
}

type Report = (field: string, problem: string) => void;

const NO_NUL = "must not contain NUL characters";

/**
 * Optional output fields are left out rather than set to undefined, so the
 * result compares and serialises cleanly.
 */
function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

// ------------------------------------------------------------------ recipient

const TO_SHAPE = "must be an email address string or an object { email, name }";

/**
 * `to` is any JSON value (google.protobuf.Value in the contract): a string
 * is the address; an object must be exactly `{ email, name? }` (the
 * contract's schema has `additionalProperties: false`, so an unknown key is
 * a mistake to report, not to ignore).
 */
function validateRecipient(value: JsonValue | undefined, report: Report): ValidatedRecipient | undefined {
  if (value === undefined || value === null) {
    report("to", "is required");
    return undefined;
  }
  if (typeof value === "string") {
    const checked = checkEmailAddress(value);
    if (checked.ok) return { email: checked.address };
    report("to", checked.problem);
    return undefined;
  }
  if (!isObject(value)) {
    report("to", TO_SHAPE);
    return undefined;
  }

  const fields = value;
  let email: string | undefined;
  let name: string | undefined;
  let ok = true;

  for (const key of Object.keys(fields)) {
    if (key !== "email" && key !== "name") {
      report(`to.${key}`, "is not a known field (allowed: email, name)");
      ok = false;
    }
  }

  const emailValue = stringOf(fields["email"]);
  if (!Object.hasOwn(fields, "email")) {
    report("to.email", "is required");
    ok = false;
  } else if (emailValue === undefined) {
    report("to.email", "must be a string");
    ok = false;
  } else {
    const checked = checkEmailAddress(emailValue);
    if (checked.ok) email = checked.address;
    else {
      report("to.email", checked.problem);
      ok = false;
    }
  }

  if (Object.hasOwn(fields, "name")) {
    const nameValue = stringOf(fields["name"]);
    if (nameValue === undefined) {
      report("to.name", "must be a string");
      ok = false;
    } else {
      const problem = headerTextProblem(nameValue, SEND_LIMITS.recipientName);
      if (problem) {
        report("to.name", problem);
        ok = false;
      } else if (nameValue !== "") {
        name = nameValue;
      }
    }
  }

  if (!ok || email === undefined) return undefined;
  return name === undefined ? { email } : { email, name };
}

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringOf(value: JsonValue | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Length and header-safety rules of a value that is written into a header. */
function headerTextProblem(value: string, max: number): string | undefined {
  if (exceedsCodePoints(value, max)) return `must be at most ${max} characters`;
  if (hasLineBreak(value)) return "must not contain line breaks (CR or LF)";
  if (hasControlCharacter(value)) return "must not contain control characters";
  return undefined;
}

// -------------------------------------------------------------------- content

interface ContentFields {
  templateId?: string;
  subject?: string;
  html?: string;
  text?: string;
}

/** `templateId`, or both `subject` and `html`; plus the length limits. */
function validateContent(req: SendCommand, report: Report): ContentFields {
  const out: ContentFields = {};

  if (req.templateId !== undefined) {
    if (req.templateId.trim() === "") report("templateId", "must not be empty");
    else if (hasNul(req.templateId)) report("templateId", NO_NUL);
    else out.templateId = req.templateId;
  }
  // An empty templateId was reported above; it does not also count as
  // "missing subject/html" noise unless those are missing too.
  const usesTemplate = req.templateId !== undefined;

  if (req.subject === undefined || req.subject.trim() === "") {
    if (!usesTemplate) report("subject", "is required when no templateId is sent");
  } else {
    const problem = headerTextProblem(req.subject, SEND_LIMITS.subject);
    if (problem) report("subject", problem);
    else out.subject = req.subject;
  }
  // A blank subject or html next to a templateId is dropped: it cannot be
  // meant to replace the template's own with nothing.

  if (req.html === undefined || req.html.trim() === "") {
    if (!usesTemplate) report("html", "is required when no templateId is sent");
  } else if (exceedsCodePoints(req.html, SEND_LIMITS.html)) {
    report("html", `must be at most ${SEND_LIMITS.html} characters`);
  } else if (hasNul(req.html)) {
    report("html", NO_NUL);
  } else {
    out.html = req.html;
  }

  if (req.text !== undefined) {
    if (exceedsCodePoints(req.text, SEND_LIMITS.text)) {
      report("text", `must be at most ${SEND_LIMITS.text} characters`);
    } else if (hasNul(req.text)) {
      report("text", NO_NUL);
    } else if (req.text !== "") {
      out.text = req.text;
    }
  }
  return out;
}

// ------------------------------------------------------------ variables, tags

/**
 * A send's variables checked alone, with the same rules and field names
 * (`variables.<key>`): a template's preview and test send take sample
 * values the way a send takes real ones. Throws one ValidationError.
 */
export function validVariables(variables: JsonObject | undefined): Readonly<Record<string, VariableValue>> {
  const problems: FieldProblem[] = [];
  const checked = validateVariables(variables, (field, problem) => problems.push({ field, problem }));
  if (problems.length > 0) throw new ValidationError(problems);
  return checked;
}

function validateVariables(
  variables: JsonObject | undefined,
  report: Report,
): Readonly<Record<string, VariableValue>> {
  const entries: [string, VariableValue][] = [];
  for (const [key, value] of Object.entries(variables ?? {})) {
    if (typeof value === "string" && exceedsCodePoints(value, SEND_LIMITS.variableValue)) {
      report(`variables.${key}`, `must be at most ${SEND_LIMITS.variableValue} characters`);
    } else if (typeof value === "string" && hasNul(value)) {
      // Rendered into the stored subject or body.
      report(`variables.${key}`, NO_NUL);
    } else if (value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      entries.push([key, value]);
    } else {
      report(`variables.${key}`, "must be a string, number, boolean or null (no objects or arrays)");
    }
  }
  // fromEntries defines own properties, so a key like "__proto__" stays data.
  return Object.fromEntries(entries);
}

function validateTags(tags: { readonly [key: string]: string } | undefined, report: Report): Readonly<Record<string, string>> {
  const entries: [string, string][] = [];
  for (const [key, value] of Object.entries(tags ?? {})) {
    let ok = true;
    if (key === "") {
      report("tags", "keys must not be empty");
      ok = false;
    } else if (exceedsCodePoints(key, SEND_LIMITS.tagKey)) {
      report(`tags.${key}`, `key must be at most ${SEND_LIMITS.tagKey} characters`);
      ok = false;
    } else if (hasNul(key)) {
      report(`tags.${key}`, `key ${NO_NUL}`);
      ok = false;
    }
    if (exceedsCodePoints(value, SEND_LIMITS.tagValue)) {
      report(`tags.${key}`, `value must be at most ${SEND_LIMITS.tagValue} characters`);
      ok = false;
    } else if (hasNul(value)) {
      report(`tags.${key}`, `value ${NO_NUL}`);
      ok = false;
    }
    if (ok) entries.push([key, value]);
  }
  return Object.fromEntries(entries);
}

