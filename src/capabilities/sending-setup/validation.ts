import { domainToASCII, domainToUnicode } from "node:url";
import { ValidationError } from "../../contract/api-error.ts";
import { checkEmailAddress } from "../messages/compose/email-address.ts";
import { exceedsCodePoints, hasControlCharacter, hasLineBreak, hasNul } from "../messages/compose/text-rules.ts";
import { SEND_LIMITS } from "../messages/compose/send-limits.ts";
import { MAX_SELECTOR_LENGTH } from "./dkim-keys.ts";

function fail(field: string, problem: string): never {
  throw new ValidationError([{ field, problem }]);
}

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const ALL_DIGITS = /^[0-9]+$/;
// Anything outside printable ASCII sends the name through IDNA (which refuses controls).
const NON_ASCII = /[^\x20-\x7e]/;
// The longest name we publish under the domain is `<selector>._domainkey.<domain>`,
// and a DNS name has at most 253 characters.
const MAX_DOMAIN = 253 - MAX_SELECTOR_LENGTH - "._domainkey.".length;
const DOMAIN_EXAMPLE = "must be a domain name such as example.com";

/**
 * A sending domain as the company owns it in DNS: lower-case, without a
 * trailing dot, internationalised names in A-label (`xn--`) form. The same
 * spelling checkEmailAddress() gives the domain of an address, so a sender's
 * domain is found by plain equality.
 */
export function validSendingDomain(field: string, value: unknown): string {
  if (typeof value !== "string") fail(field, DOMAIN_EXAMPLE);
  let name = value.trim().toLowerCase();
  if (name.endsWith(".")) name = name.slice(0, -1);
  if (name === "") fail(field, DOMAIN_EXAMPLE);
  if (NON_ASCII.test(name)) {
    const ascii = domainToASCII(name);
    // Refuse names IDNA would change beyond case (full-width dots,
    // zero-width characters): the domain must be the one the operator typed.
    if (ascii === "" || domainToUnicode(ascii) !== name.normalize("NFC")) fail(field, `${DOMAIN_EXAMPLE} (invalid internationalised name)`);
    name = ascii;
  }
  if (name.length > MAX_DOMAIN) fail(field, `must be at most ${MAX_DOMAIN} characters`);
  const labels = name.split(".");
  if (labels.length < 2) fail(field, `${DOMAIN_EXAMPLE} (at least two labels)`);
  for (const label of labels) {
    if (!LDH_LABEL.test(label)) fail(field, `${DOMAIN_EXAMPLE} (labels of 1 to 63 letters, digits and inner hyphens)`);
  }
  if (ALL_DIGITS.test(labels[labels.length - 1] ?? "")) fail(field, `${DOMAIN_EXAMPLE} (not an IP address)`);
  return name;
}

/** A sender address: local part as written, domain as validSendingDomain() spells it. */
export function validSenderEmail(field: string, value: unknown): { email: string; domain: string } {
  if (typeof value !== "string") fail(field, "must be an email address");
  const check = checkEmailAddress(value.trim());
  if (!check.ok) fail(field, check.problem);
  const at = check.address.lastIndexOf("@");
  return { email: check.address, domain: check.address.slice(at + 1) };
}

/**
 * The display name of a From header: optional (empty means none), no line
 * breaks or controls (it ends up in a header), at most 120 characters like a
 * recipient's name.
 */
export function validDisplayName(field: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const name = value.trim();
  if (name === "") return null;
  if (hasLineBreak(name) || hasControlCharacter(name)) fail(field, "must not contain line breaks or control characters");
  if (exceedsCodePoints(name, SEND_LIMITS.recipientName)) fail(field, `must be at most ${SEND_LIMITS.recipientName} characters`);
  return name;
}

const MAX_TEMPLATE_NAME = 200;

export interface TemplateInput {
  readonly name: string;
  readonly subject: string;
  readonly html: string;
  readonly text?: string | null | undefined;
}

/** A template, with the limits a send applies to the same fields (spec: Limits). */
export function validTemplate(input: TemplateInput): { name: string; subject: string; html: string; text: string | null } {
  const name = typeof input.name === "string" ? input.name.trim() : "";
  if (name === "" || exceedsCodePoints(name, MAX_TEMPLATE_NAME)) fail("name", `must be 1 to ${MAX_TEMPLATE_NAME} characters`);
  if (hasControlCharacter(name) || hasLineBreak(name)) fail("name", "must not contain line breaks or control characters");

  const subject = typeof input.subject === "string" ? input.subject : "";
  if (subject.trim() === "") fail("subject", "must not be empty");
  if (exceedsCodePoints(subject, SEND_LIMITS.subject)) fail("subject", `must be at most ${SEND_LIMITS.subject} characters`);
  // A rendered subject has its line breaks replaced anyway; refusing them
  // here keeps the stored template what the operator meant.
  if (hasLineBreak(subject) || hasControlCharacter(subject)) fail("subject", "must not contain line breaks or control characters");

  const html = typeof input.html === "string" ? input.html : "";
  if (html.trim() === "") fail("html", "must not be empty");
  if (exceedsCodePoints(html, SEND_LIMITS.html)) fail("html", `must be at most ${SEND_LIMITS.html} characters`);
  // PostgreSQL text cannot hold U+0000 (the statement would fail).
  if (hasNul(html)) fail("html", "must not contain NUL characters");

  const text = input.text === undefined || input.text === null || input.text === "" ? null : input.text;
  if (text !== null && exceedsCodePoints(text, SEND_LIMITS.text)) fail("text", `must be at most ${SEND_LIMITS.text} characters`);
  if (text !== null && hasNul(text)) fail("text", "must not contain NUL characters");
  return { name, subject, html, text };
}
