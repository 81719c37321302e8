import type { ContactDecision } from "./ports.ts";
import { isKeptStatus } from "./status-rules.ts";
import type { ConfirmPendingCommand, ContactRecord } from "./types.ts";

/**
 * The confirmation of a pending contact (double opt-in): a `pending`
 * contact becomes `subscribed` with the confirmation's consent, and one
 * `contact.updated` event (change `consent`, the caller's source, e.g.
 * `form`) is written in the same transaction, through the store's one
 * write path (ContactStore.write), so the row lock, the event ordering and
 * the outbox are the same as for POST /mail/v1/contacts.
 *
 * Only `pending` moves. `subscribed` is "already confirmed" (nothing is
 * written: confirming twice changes nothing); `unsubscribed`,
 * `suppressed`, `bounced` and `complained` are kept (spec: Contact status
 * rules), whatever the confirmation says.
 *
 * A use case of its own (Contacts.confirmPending) beside the upsert, which
 * cannot say "subscribe only if still pending" (it would subscribe from any
 * non-protected status, and record a new consent on every click).
 */
export type PendingDecisionKind = "subscribed" | "already-subscribed" | "kept";

/**
 * What a confirmation does to `current` (pure; the store calls it with the
 * contact locked). `writeId` makes the event's outbox row unique.
 */
export function decidePendingConfirmation(
  current: ContactRecord,
  confirmation: Pick<ConfirmPendingCommand, "consent" | "eventSource">,
  writeId: string,
  now: Date,
): { readonly kind: PendingDecisionKind; readonly decision: ContactDecision } {
  // Never before the contact's last change, as every contact write (decide-write.ts): its events stay ordered.
  const at = current.updatedAt.getTime() >= now.getTime() ? new Date(current.updatedAt.getTime() + 1) : now;
  if (current.status !== "pending") {
    return { kind: isKeptStatus(current.status) ? "kept" : "already-subscribed", decision: { state: current, event: null, at } };
  }
  const state = { ...current, status: "subscribed" as const, consent: confirmation.consent };
  return {
    kind: "subscribed",
    decision: {
      state,
      at,
      event: {
        event: "contact.updated",
        occurredAt: at,
        data: {
          contactId: current.id,
          email: current.email,
          status: state.status,
          source: confirmation.eventSource,
          change: "consent",
          occurredAt: at.toISOString(),
        },
        dedupeKey: `contact:${current.id}:${writeId}`,
      },
    },
  };
}
