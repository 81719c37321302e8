import { WEBHOOK_EVENT_NAMES } from "../../contract/enums.ts";

/**
 * The event kinds an endpoint can subscribe to (spec: Event kinds),
 * declared once in the contract (`mail.v1.WebhookEvent`). The outbox
 * (webhook_event) is written by the capabilities whose changes the events
 * report; an endpoint receives only the kinds it subscribed to.
 */
export { WEBHOOK_EVENT_NAMES };

/** A webhook event's wire name (`sent`, `message.accepted`, ...): one of WEBHOOK_EVENT_NAMES. */
export type WebhookEventName = string;

const KNOWN: ReadonlySet<string> = new Set(WEBHOOK_EVENT_NAMES);

export function isWebhookEventName(value: string): value is WebhookEventName {
  return KNOWN.has(value);
}
