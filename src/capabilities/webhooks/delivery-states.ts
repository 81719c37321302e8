/**
 * States of a webhook delivery. The spec names `attempting` and
 * `dead_letter` ("Fifth attempt fails -> dead_letter: no automatic retry;
 * kept for a manual retry; new events still delivered"); the others are
 * ours:
 *
 * - `pending`: created by the fan-out of an event; no attempt has ended yet.
 * - `attempting`: at least one attempt failed and another is scheduled (or
 *   under way); also the state a manual retry puts a dead letter in.
 * - `succeeded`: the endpoint answered 2xx within the timeout. Final.
 * - `dead_letter`: the last attempt of a round (the fifth) failed. Nothing
 *   happens until a manual retry starts a new round of attempts.
 *
 *   pending --2xx--> succeeded
 *   pending --fail--> attempting --2xx--> succeeded
 *   attempting --fifth failure--> dead_letter --manual retry--> attempting
 */
export const DELIVERY_STATES = ["pending", "attempting", "succeeded", "dead_letter"] as const;

export type DeliveryState = (typeof DELIVERY_STATES)[number];

const KNOWN: ReadonlySet<string> = new Set(DELIVERY_STATES);

export function isDeliveryState(value: string): value is DeliveryState {
  return KNOWN.has(value);
}
