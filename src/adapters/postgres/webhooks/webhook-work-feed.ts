import { type ChangeFeed, type ChangeFeedHandlers, listenForChanges } from "../change-feed.ts";
import { WEBHOOK_WORK_CHANNEL } from "../entities/notify-channels.ts";
import type { Pool } from "../sql.ts";

/**
 * The webhook outbox relay's wake-up feed (../change-feed.ts): triggers on
 * webhook_event and webhook_delivery (migration
 * Migration20251201000000_webhook_work_notices) NOTIFY WEBHOOK_WORK_CHANNEL
 * when events are recorded or a manual retry is asked for, so the relay
 * runs a pass at once instead of at its next polling pass. `changed()` is
 * also said once LISTEN is in place (after a reconnection too): a pass then
 * picks up whatever was written while nobody listened.
 */
export { WEBHOOK_WORK_CHANNEL };

/** The connection's application_name, as pg_stat_activity shows it. */
export const WEBHOOK_WORK_FEED_APPLICATION_NAME = "mail-webhook-work";

export function listenForWebhookWork(pool: () => Promise<Pool>, handlers: ChangeFeedHandlers): ChangeFeed {
  return listenForChanges(pool, WEBHOOK_WORK_CHANNEL, handlers, WEBHOOK_WORK_FEED_APPLICATION_NAME);
}
