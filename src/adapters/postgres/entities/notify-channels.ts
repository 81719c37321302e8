/**
 * The NOTIFY channels the entities' triggers signal on commit, declared
 * with the schema that signals them; each feed that LISTENs (../change-feed.ts
 * and the feeds beside the stores) reads its channel from here.
 */

/** API keys and their companies changed: the key lookup cache empties (../accounts/credential-changes.ts). */
export const CREDENTIALS_CHANNEL = "mail_credentials_changed";

/** Senders or sending domains changed: the sender check cache empties (../sending-setup/sender-changes.ts). */
export const SENDERS_CHANNEL = "mail_senders_changed";

/** Webhook events recorded or a retry asked for: the webhook relay runs a pass (../webhooks/webhook-work-feed.ts). */
export const WEBHOOK_WORK_CHANNEL = "mail_webhook_work";

/** Webhook events committed, with their company and ids: the live streams read them (../webhooks/live-event-feed.ts). */
export const LIVE_EVENTS_CHANNEL = "mail_webhook_live";
