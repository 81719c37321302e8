import { type ChangeFeed, type ChangeFeedHandlers, listenForChanges } from "../change-feed.ts";
import { SENDERS_CHANNEL } from "../entities/notify-channels.ts";
import type { Pool } from "../sql.ts";

/**
 * The accept path's sender check cache's feed (../change-feed.ts): triggers
 * on sender and sending_domain (migration
 * Migration20251126000000_sender_change_notices) NOTIFY SENDERS_CHANNEL
 * when a sender is added, changed or deleted, or a sending domain changes
 * (its verification) or is deleted.
 */
export { SENDERS_CHANNEL };

/** The connection's application_name, as pg_stat_activity shows it. */
export const SENDER_FEED_APPLICATION_NAME = "mail-sender-changes";

export function listenForSenderChanges(pool: () => Promise<Pool>, handlers: ChangeFeedHandlers): ChangeFeed {
  return listenForChanges(pool, SENDERS_CHANNEL, handlers, SENDER_FEED_APPLICATION_NAME);
}
