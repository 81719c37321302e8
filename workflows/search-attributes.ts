import { defineSearchAttributeKey, SearchAttributeType } from "@temporalio/common";

/**
 * Every custom search attribute our workflows set, in one place: the
 * workflows and the dispatchers use the keys, and the same list is
 * registered on the dev server at start (src/runtime/temporal-dev-server.ts)
 * and on a real cluster through the operator service (ensureSearchAttributes).
 * A server that lacks one refuses to start a workflow that sets it.
 *
 * Operators find workflows with them in the Temporal UI, e.g.
 * `MailStatus = "deferred" AND MailCompanyId = "…"`.
 */

// Message workflows (workflows/messages).
export const MAIL_COMPANY_ID = defineSearchAttributeKey("MailCompanyId", SearchAttributeType.KEYWORD);
export const MAIL_STATUS = defineSearchAttributeKey("MailStatus", SearchAttributeType.KEYWORD);
export const MAIL_RECIPIENT_DOMAIN = defineSearchAttributeKey("MailRecipientDomain", SearchAttributeType.KEYWORD);
export const MAIL_MESSAGE_ID = defineSearchAttributeKey("MailMessageId", SearchAttributeType.KEYWORD);

// Campaign workflows (workflows/campaigns) also set MailCompanyId and MailStatus.
export const MAIL_CAMPAIGN_ID = defineSearchAttributeKey("MailCampaignId", SearchAttributeType.KEYWORD);

// Webhook delivery workflows.
export const WEBHOOK_COMPANY_ID = defineSearchAttributeKey("WebhookCompanyId", SearchAttributeType.KEYWORD);
export const WEBHOOK_ENDPOINT_ID = defineSearchAttributeKey("WebhookEndpointId", SearchAttributeType.KEYWORD);
/** The event type delivered, e.g. `delivered`, `message.accepted`. */
export const WEBHOOK_EVENT = defineSearchAttributeKey("WebhookEvent", SearchAttributeType.KEYWORD);
export const WEBHOOK_DELIVERY_STATUS = defineSearchAttributeKey("WebhookDeliveryStatus", SearchAttributeType.KEYWORD);

// Sending domain re-check workflows (workflows/domains) also set MailCompanyId: the dev server's visibility store holds at most 10 Keyword attributes.
/** pending, verified or degraded. */
export const DOMAIN_STATUS = defineSearchAttributeKey("DomainStatus", SearchAttributeType.KEYWORD);

/** A key of any type (the SDK does not export its SearchAttributeKey type from the package root). */
export type AnySearchAttributeKey = ReturnType<typeof defineSearchAttributeKey>;

/** What a server must have registered: every key above, once. */
export const SEARCH_ATTRIBUTES: readonly AnySearchAttributeKey[] = [
  MAIL_COMPANY_ID,
  MAIL_STATUS,
  MAIL_RECIPIENT_DOMAIN,
  MAIL_MESSAGE_ID,
  MAIL_CAMPAIGN_ID,
  WEBHOOK_COMPANY_ID,
  WEBHOOK_ENDPOINT_ID,
  WEBHOOK_EVENT,
  WEBHOOK_DELIVERY_STATUS,
  DOMAIN_STATUS,
];
