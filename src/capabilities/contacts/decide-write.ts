import { nextStatus } from "./status-rules.ts";
import type { ContactDecision, ContactEventDraft } from "./ports.ts";
import type { AttributeValue, ChangeSource, ConsentRecord, ContactRecord, ContactState } from "./types.ts";
import type { ValidConsent, ValidWrite } from "./validate-write.ts";

/** What the `change` of a `contact.updated` event says (spec: Event kinds). */
export type ContactChange = "created" | "updated" | "consent";

export interface WriteContext {
  /** Id of the contact if the write creates it. */
  readonly newId: string;
  /** Unique per call, so that each change is one outbox row. */
  readonly writeId: string;
  /** Who writes: the event's `source`. */
  readonly source: ChangeSource;
}

/**
 * The contact after a validated write, and the `contact.updated` event that
 * reports it, or no event when nothing changed. Pure: the store calls it
 * with the stored contact locked (or undefined for a new one).
 *
 * - firstName, lastName, company, phone, locale: sent replaces, an empty
 *   string (null here) clears, absent keeps.
 * - attributes, tags, listIds: sent replaces (tags in the order written;
 *   the same set in another order is no change), absent keeps.
 * - status: status-rules.ts.
 * - consent: sent replaces, except that consent sent without `at` with the
 *   stored source and reference is the same consent again and keeps its
 *   time (so a store that sends its checkout consent with every order does
 *   not make a change, and an event, of each write).
 * - email: the address as last written (the key matched already).
 *
 * change: `created` for a new contact; `consent` when the status or the
 * consent changed; `updated` when anything else did.
 *
 * An anonymous write (source `form`: a visitor of a hosted sign-up page,
 * who has not proven the address is theirs) creates a new contact only: an
 * existing contact keeps every field, attribute, status and consent, and no
 * event is made. Its owner changes it by confirming the double opt-in link
 * (confirm-pending.ts), or the company through the API. Decided here, under
 * the store's row lock, so two sign-ups racing for a new address cannot
 * overwrite each other either.
 */
export function decideWrite(write: ValidWrite, current: ContactRecord | undefined, context: WriteContext, now: Date): ContactDecision {
  // Never before the contact's last change: the events of one contact are
  // ordered by occurredAt as they committed, even across processes whose
  // clocks disagree a little.
  const at = current && current.updatedAt.getTime() >= now.getTime() ? new Date(current.updatedAt.getTime() + 1) : now;
  if (current && isAnonymous(context.source)) return { state: stateOf(current), event: null, at };
  const status = nextStatus({ current: current?.status, requested: write.status, withConsent: write.consent !== undefined });
  const state: ContactState = {
    email: write.email,
    firstName: write.firstName === undefined ? (current?.firstName ?? null) : write.firstName,
    lastName: write.lastName === undefined ? (current?.lastName ?? null) : write.lastName,
    company: write.company === undefined ? (current?.company ?? null) : write.company,
    phone: write.phone === undefined ? (current?.phone ?? null) : write.phone,
    locale: write.locale === undefined ? (current?.locale ?? null) : write.locale,
    attributes: write.attributes ?? current?.attributes ?? {},
    tags: write.tags === undefined ? (current?.tags ?? []) : current && sameSet(current.tags, write.tags) ? current.tags : write.tags,
    listIds: write.listIds === undefined ? (current?.listIds ?? []) : [...write.listIds].sort(),
    status,
    consent: consentAfter(write.consent, current?.consent ?? null),
  };

  const change = changeOf(current, state);
  if (change === null) return { state, event: null, at };
  const contactId = current?.id ?? context.newId;
  const event: ContactEventDraft = {
    event: "contact.updated",
    occurredAt: at,
    data: { contactId, email: state.email, status: state.status, source: context.source, change, occurredAt: at.toISOString() },
    dedupeKey: `contact:${contactId}:${context.writeId}`,
  };
  return { state, event, at };
}

/** Writes whose author has not shown they own the address. */
function isAnonymous(source: ChangeSource): boolean {
  return source === "form";
}

function stateOf(contact: ContactRecord): ContactState {
  const { id: _id, createdAt: _created, updatedAt: _updated, ...state } = contact;
  return state;
}

function consentAfter(sent: ValidConsent | undefined, stored: ConsentRecord | null): ConsentRecord | null {
  if (sent === undefined) return stored;
  if (stored && sent.atDefaulted && sent.source === stored.source && sent.reference === stored.reference) return stored;
  return { source: sent.source, at: sent.at, reference: sent.reference };
}

function changeOf(current: ContactRecord | undefined, next: ContactState): ContactChange | null {
  if (!current) return "created";
  if (current.status !== next.status || !sameConsent(current.consent, next.consent)) return "consent";
  const same =
    current.email === next.email &&
    current.firstName === next.firstName &&
    current.lastName === next.lastName &&
    current.company === next.company &&
    current.phone === next.phone &&
    current.locale === next.locale &&
    sameAttributes(current.attributes, next.attributes) &&
    sameList(current.tags, next.tags) &&
    sameList(current.listIds, next.listIds);
  return same ? null : "updated";
}

function sameConsent(a: ConsentRecord | null, b: ConsentRecord | null): boolean {
  if (a === null || b === null) return a === b;
  return a.source === b.source && a.reference === b.reference && a.at.getTime() === b.at.getTime();
}

function sameAttributes(a: Readonly<Record<string, AttributeValue>>, b: Readonly<Record<string, AttributeValue>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((value) => set.has(value));
}
