import type { EntityManager } from "@mikro-orm/postgresql";
import { WebhookEventSchema } from "../entities/index.ts";

/** A webhook event to publish with the change that causes it. */
export interface OutboxEventDraft {
  readonly event: string;
  readonly occurredAt: Date;
  readonly data: Readonly<Record<string, unknown>>;
  /** Unique per change: a repeated change records nothing twice. */
  readonly dedupeKey: string;
}

/**
 * Writes webhook events into the outbox (webhook_event) on the transaction
 * of the change that causes them, so the events exist exactly when the
 * change does; the webhook relay fans them out. A dedupe key already
 * recorded records nothing.
 */
export async function insertOutboxEvents(em: EntityManager, companyId: string, drafts: readonly OutboxEventDraft[]): Promise<void> {
  for (const draft of drafts) {
    await em
      .createQueryBuilder(WebhookEventSchema)
      .insert({ company: companyId, event: draft.event, occurredAt: draft.occurredAt, data: draft.data, dedupeKey: draft.dedupeKey })
      .onConflict("dedupeKey")
      .ignore()
      .execute("run");
  }
}
