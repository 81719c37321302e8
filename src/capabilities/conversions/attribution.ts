/**
 * Attribution (spec: conversions are recorded "so that campaign reports
 * attribute revenue to the last verified click"): a conversion is credited
 * to the campaign and link of the contact's last verified click, the latest
 * click that was not flagged `suspect` (an automated click: link scanners,
 * prefetchers), at or before the conversion's occurredAt and at most
 * ATTRIBUTION_WINDOW_DAYS before it. Without such a click the conversion
 * is not attributed (campaignId and linkId null).
 *
 * The click is the contact's when it carries the contact's id or address
 * (clicks come from campaign.click events, which carry both). Attribution
 * is decided once, when the conversion is first recorded; refunds and
 * cancellations keep it, so a campaign's net revenue falls with them.
 */
export const ATTRIBUTION_WINDOW_DAYS = 30;

const DAY_MS = 24 * 60 * 60_000;

/** The clicks that may earn a conversion that occurred at `occurredAt`: from (exclusive) .. to (inclusive). */
export function attributionWindow(occurredAt: Date): { readonly from: Date; readonly to: Date } {
  return { from: new Date(occurredAt.getTime() - ATTRIBUTION_WINDOW_DAYS * DAY_MS), to: occurredAt };
}
