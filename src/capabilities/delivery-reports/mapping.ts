import type { ProviderEventType } from "../messages/email-provider.ts";

/**
 * What a delivery report means for its message, declared once here (the
 * tables of docs/delivery-loop.md):
 *   - a provider event type (`delivered`, `bounced`, `complained`): applied
 *     through the same idempotent path as every provider event;
 *   - `noted`: kept for operators with the message it is about, never a
 *     status change (a delay, a soft bounce);
 *   - `unmatched`: not a report we understand; kept 7 days for operators.
 */
export type ReportMeaning =
  | { readonly kind: "event"; readonly type: ProviderEventType }
  | { readonly kind: "noted"; readonly what: NotedReportKind }
  | { readonly kind: "unmatched"; readonly reason: string };

export type NotedReportKind = "delayed" | "soft_bounce";

const event = (type: ProviderEventType): ReportMeaning => ({ kind: "event", type });
const noted = (what: NotedReportKind): ReportMeaning => ({ kind: "noted", what });
const unmatched = (reason: string): ReportMeaning => ({ kind: "unmatched", reason });

/**
 * RFC 3464 `Action` and `Status` of one recipient -> meaning.
 *
 * | Action    | Status | Meaning                |
 * |-----------|--------|------------------------|
 * | delivered | any    | delivered              |
 * | relayed   | any    | delivered (handed to a final hop that does not do DSN: the last news there will be) |
 * | expanded  | any    | delivered              |
 * | failed    | 5.x.x  | bounced                |
 * | failed    | 4.x.x  | noted: soft_bounce     |
 * | delayed   | any    | noted: delayed         |
 */
export function meaningOfDsn(action: string, status: string): ReportMeaning {
  const a = action.trim().toLowerCase();
  const s = status.trim();
  switch (a) {
    case "delivered":
    case "relayed":
    case "expanded":
      return event("delivered");
    case "failed":
      if (/^5\.\d{1,3}\.\d{1,3}/.test(s)) return event("bounced");
      if (/^4\.\d{1,3}\.\d{1,3}/.test(s)) return noted("soft_bounce");
      return unmatched(`DSN action failed with an unreadable status ${JSON.stringify(s.slice(0, 40))}`);
    case "delayed":
      return noted("delayed");
    default:
      return unmatched(`DSN action ${JSON.stringify(a.slice(0, 40))} is not one of RFC 3464's`);
  }
}

/** RFC 5965 `Feedback-Type` -> meaning: only `abuse` is a complaint. */
export function meaningOfFeedback(feedbackType: string): ReportMeaning {
  const type = feedbackType.trim().toLowerCase();
  if (type === "abuse") return event("complained");
  return unmatched(`feedback type ${JSON.stringify(type.slice(0, 40))} is not a complaint`);
}

/**
 * SES event notification (`notificationType`, or `eventType` of a
 * configuration set's event destination) -> meaning.
 *
 * | SES type       | Detail                  | Meaning                         |
 * |----------------|-------------------------|---------------------------------|
 * | Delivery       |                         | delivered                       |
 * | Bounce         | bounceType Permanent    | bounced                         |
 * | Bounce         | Transient, Undetermined | noted: soft_bounce              |
 * | Complaint      |                         | complained                      |
 * | Reject         |                         | rejected (credit returned)      |
 * | DeliveryDelay  |                         | noted: delayed                  |
 * | anything else  | (Send, Open, Click...)  | ignored (answered 200)          |
 */
export function meaningOfSesNotification(type: string, bounceType: string | undefined): ReportMeaning | "ignored" {
  switch (type) {
    case "Delivery":
      return event("delivered");
    case "Bounce":
      return bounceType === "Permanent" ? event("bounced") : noted("soft_bounce");
    case "Complaint":
      return event("complained");
    case "Reject":
      return event("rejected");
    case "DeliveryDelay":
      return noted("delayed");
    default:
      return "ignored";
  }
}
