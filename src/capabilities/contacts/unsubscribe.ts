import type { ContactDecision } from "./ports.ts";
import type { ConsentRecord, ContactRecord, ContactStatusName, UnsubscribeContactCommand } from "./types.ts";

/**
 * A recipient's own unsubscribe (a campaign's one-click POST, the footer
 * page's button, mail to the List-Unsubscribe mailto): a `subscribed` or
 * `pending` contact becomes `unsubscribed`. The withdrawal is the consent
 * evidence now: the contact's consent becomes the unsubscribe's record
 * (source `unsubscribe:<how>`, when, reference naming the campaign), and
 * one `contact.updated` event (change `consent`, source `unsubscribe`) is
 * written with it, through the store's one write path.
 *
 * `unsubscribed` is "already unsubscribed" (nothing is written: a second
 * click changes nothing); `suppressed`, `bounced` and `complained` are kept
 * (spec: Contact status rules). Only marketing mail stops: transactional
 * mail to the address goes on (spec rule 2), as no suppression is added.
 */
export type UnsubscribeDecisionKind = "unsubscribed" | "already-unsubscribed" | "kept";

const FROM: ReadonlySet<ContactStatusName> = new Set(["subscribed", "pending"]);

export function decideUnsubscribe(
  current: ContactRecord,
  command: Pick<UnsubscribeContactCommand, "method" | "reference">,
  writeId: string,
  now: Date,
): { readonly kind: UnsubscribeDecisionKind; readonly decision: ContactDecision } {
  // Never before the contact's last change, as every contact write (decide-write.ts): its events stay ordered.
  const at = current.updatedAt.getTime() >= now.getTime() ? new Date(current.updatedAt.getTime() + 1) : now;
  if (!FROM.has(current.status)) {
    return { kind: current.status === "unsubscribed" ? "already-unsubscribed" : "kept", decision: { state: current, event: null, at } };
  }
  const consent: ConsentRecord = { source: `unsubscribe:${command.method}`, at, reference: command.reference };
  const state = { ...current, status: "unsubscribed" as const, consent };
  return {
    kind: "unsubscribed",
    decision: {
      state,
      at,
      event: {
        event: "contact.updated",
        occurredAt: at,
        data: { contactId: current.id, email: current.email, status: state.status, source: "unsubscribe", change: "consent", occurredAt: at.toISOString() },
        dedupeKey: `contact:${current.id}:${writeId}`,
      },
    },
  };
}
