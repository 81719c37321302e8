import { type ChangeFeed, type ChangeFeedHandlers, listenForChanges } from "../change-feed.ts";
import { CREDENTIALS_CHANNEL } from "../entities/notify-channels.ts";
import type { Pool } from "../sql.ts";

/**
 * The API key lookup cache's feed (../change-feed.ts): triggers on api_key
 * and company (migration Migration20251125200000_credential_change_notices)
 * NOTIFY CREDENTIALS_CHANNEL when a key is revoked, expires, is rotated,
 * renamed, re-scoped or deleted, or its company's entitlements change.
 */
export { CREDENTIALS_CHANNEL };

export type CredentialChangeHandlers = ChangeFeedHandlers;
export type CredentialChangeFeed = ChangeFeed;

/** The connection's application_name, as pg_stat_activity shows it. */
export const FEED_APPLICATION_NAME = "mail-credential-changes";

export function listenForCredentialChanges(pool: () => Promise<Pool>, handlers: CredentialChangeHandlers): CredentialChangeFeed {
  return listenForChanges(pool, CREDENTIALS_CHANNEL, handlers, FEED_APPLICATION_NAME);
}
