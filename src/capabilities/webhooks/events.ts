/**
 * The event kinds an endpoint can subscribe to (spec: Event kinds). The
 * outbox (webhook_event) is written by the capabilities whose changes the
 * events report; an endpoint receives only the kinds it subscribed to.
 */
export const WEBHOOK_EVENT_NAMES = [
  "sent",
  "delivered",
  "bounced",
  "complaint",
  "failed",
  "opened",
  "clicked",
  "unsubscribed",
  "message.accepted",
  "campaign.sent",
  "campaign.click",
  "contact.updated",
  "conversion.recorded",
  "order.event",
  "order.created",
  "order.paid",
] as const;

export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

const KNOWN: ReadonlySet<string> = new Set(WEBHOOK_EVENT_NAMES);

export function isWebhookEventName(value: string): value is WebhookEventName {
  return KNOWN.has(value);
}
