import { getOption } from "@bufbuild/protobuf";
import { wire_name } from "@gen/mail/v1/options_pb.js";
import { WebhookEventSchema } from "@gen/mail/v1/webhooks_pb.js";

/**
 * The event kinds an endpoint can subscribe to, grouped for the picker.
 * The names come from the contract (`mail.v1.WebhookEvent`), which the
 * service validates against too; this file only says which group each
 * belongs to (a name it does not know lands in "Other", so a new kind is
 * never hidden).
 */
const GROUP_OF: Readonly<Record<string, string>> = {
  sent: "Transactional and campaign messages",
  delivered: "Transactional and campaign messages",
  bounced: "Transactional and campaign messages",
  complaint: "Transactional and campaign messages",
  failed: "Transactional and campaign messages",
  "message.accepted": "Transactional and campaign messages",
  opened: "Campaign engagement",
  clicked: "Campaign engagement",
  unsubscribed: "Campaign engagement",
  "campaign.sent": "Campaign engagement",
  "campaign.click": "Campaign engagement",
  "contact.updated": "Contacts",
  "conversion.recorded": "Conversions",
  "order.event": "Store orders",
  "order.created": "Store orders",
  "order.paid": "Store orders",
};

export const WEBHOOK_EVENTS: readonly string[] = WebhookEventSchema.values.map((v) => getOption(v, wire_name)).filter((name) => name !== "");

export interface EventGroup {
  readonly name: string;
  readonly events: readonly string[];
}

export function webhookEventGroups(): EventGroup[] {
  const groups = new Map<string, string[]>();
  for (const event of WEBHOOK_EVENTS) {
    const group = GROUP_OF[event] ?? "Other";
    groups.set(group, [...(groups.get(group) ?? []), event]);
  }
  return [...groups].map(([name, events]) => ({ name, events }));
}
