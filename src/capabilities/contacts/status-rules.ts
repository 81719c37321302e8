import type { ContactStatusName, WritableStatus } from "./types.ts";

/**
 * The contact status rules (spec: Contact status rules), as one pure
 * function so that every case can be tested on its own:
 *
 * 1. A new contact written without consent is `pending`.
 * 2. A contact becomes `subscribed` only when consent comes with the write
 *    (a write asking for `subscribed` without consent is refused before
 *    this runs: validate-write.ts names `consent`).
 * 3. A contact that is `unsubscribed`, `suppressed`, `bounced` or
 *    `complained` keeps that status: the API never overwrites it.
 *
 * Within those rules the write's `status` wins when it is sent (`pending`
 * with consent stays `pending`: consent recorded, confirmation awaited, as
 * in double opt-in; `subscribed` may go back to `pending` or to
 * `unsubscribed`); without one, consent subscribes a pending or new
 * contact and anything else keeps the status.
 */

/** Statuses the API never moves a contact out of. */
const KEPT: ReadonlySet<ContactStatusName> = new Set(["unsubscribed", "suppressed", "bounced", "complained"]);

export function isKeptStatus(status: ContactStatusName): boolean {
  return KEPT.has(status);
}

export interface StatusDecisionInput {
  /** The stored status; undefined for a new contact. */
  readonly current: ContactStatusName | undefined;
  /** The status the write asks for, if any (already checked to be writable). */
  readonly requested: WritableStatus | undefined;
  /** Whether the write carries consent. */
  readonly withConsent: boolean;
}

export function nextStatus({ current, requested, withConsent }: StatusDecisionInput): ContactStatusName {
  if (current !== undefined && KEPT.has(current)) return current;
  if (requested === "subscribed") return withConsent ? "subscribed" : (current ?? "pending");
  if (requested !== undefined) return requested;
  if (withConsent) return "subscribed";
  return current ?? "pending";
}
