import { randomUUID } from "node:crypto";
import { contactEmail } from "./email.ts";
import { isUuid } from "./filters.ts";
import type { ContactDecision, ContactStore } from "./ports.ts";
import { isKeptStatus } from "./status-rules.ts";
import type { ChangeSource, ConsentRecord, ContactRecord } from "./types.ts";

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
 * Added for the sign-up forms (src/capabilities/forms/hosted): a small use
 * case of its own beside the Contacts API, whose upsert cannot say
 * "subscribe only if still pending" (it would subscribe from any
 * non-protected status, and record a new consent on every click).
 */
export interface PendingConfirmation {
  readonly contactId: string;
  readonly consent: ConsentRecord;
  /** `source` of the `contact.updated` event (`form` for a hosted form). */
  readonly eventSource: ChangeSource;
}

export type PendingConfirmationOutcome =
  | { readonly kind: "subscribed"; readonly contact: ContactRecord }
  | { readonly kind: "already-subscribed"; readonly contact: ContactRecord }
  /** The contact has a status the confirmation may not overwrite. */
  | { readonly kind: "kept"; readonly contact: ContactRecord }
  | { readonly kind: "not-found" };

export interface PendingConfirmations {
  confirmPending(companyId: string, confirmation: PendingConfirmation): Promise<PendingConfirmationOutcome>;
}

export interface PendingConfirmationsOptions {
  readonly now?: () => Date;
}

export type PendingDecisionKind = "subscribed" | "already-subscribed" | "kept";

/**
 * What a confirmation does to `current` (pure; the store calls it with the
 * contact locked). `writeId` makes the event's outbox row unique.
 */
export function decidePendingConfirmation(
  current: ContactRecord,
  confirmation: PendingConfirmation,
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

export function createPendingConfirmations(store: ContactStore, options: PendingConfirmationsOptions = {}): PendingConfirmations {
  const now = options.now ?? (() => new Date());
  return {
    async confirmPending(companyId, confirmation) {
      if (!isUuid(companyId) || !isUuid(confirmation.contactId)) return { kind: "not-found" };
      const found = await store.findById(companyId, confirmation.contactId.toLowerCase());
      if (!found) return { kind: "not-found" };
      if (found.status !== "pending") return { kind: isKeptStatus(found.status) ? "kept" : "already-subscribed", contact: found };

      const checked = contactEmail(found.email);
      const writeId = randomUUID();
      let kind: PendingDecisionKind = "already-subscribed";
      const outcome = await store.write({
        companyId,
        key: checked.ok ? checked.key : found.email.toLowerCase(),
        // The store offers every write an insert first. Contacts are never
        // deleted, so the row is there and the insert does nothing; were it
        // gone, it would come back as it was read, with its own id.
        newId: found.id,
        // Memberships are not touched (the state keeps the contact's lists).
        listIds: [],
        decide: (current) => {
          const decided = decidePendingConfirmation(current ?? found, confirmation, writeId, now());
          kind = decided.kind;
          return decided.decision;
        },
      });
      if (outcome.kind !== "written") throw new Error("a confirmation names no list");
      return { kind, contact: outcome.contact };
    },
  };
}
