/**
 * The activity of the webhook delivery workflow, declared here (types only)
 * and implemented by src/adapters/temporal/webhooks/activities.ts. Its
 * input and answer are recorded in every delivery's history: a field may be
 * added as optional, never renamed or removed, or runs under way stop
 * replaying (test/workflows/webhooks/replay.test.ts).
 *
 * A failed HTTP attempt is an answer, not an error: Temporal retries the
 * activity only when the attempt could not run or be recorded (database
 * down, worker lost), never because the receiver failed.
 */

/** One attempt of a delivery. */
export interface AttemptDeliveryInput {
  readonly companyId: string;
  readonly deliveryId: string;
  /** From 1; the attempt header. */
  readonly attempt: number;
  /** Last attempt of its round: a failure makes the delivery a dead letter. */
  readonly final: boolean;
  /** When not final: milliseconds until the next attempt, recorded as next_attempt_at. */
  readonly retryInMs: number | null;
  /**
   * The attempt's activity ran out of tries (an endpoint secret no
   * configured key opens, ...): record it as a `network` failure without a
   * request, so the round goes on and its last failure makes a dead letter.
   */
  readonly couldNotRun?: boolean;
}

/** A delivery's state after an attempt; `gone` when the delivery or its endpoint was deleted (nothing more to do). */
export type AttemptedDeliveryState = "pending" | "attempting" | "succeeded" | "dead_letter" | "gone";

export interface AttemptDeliveryResult {
  readonly state: AttemptedDeliveryState;
  /** The HTTP status the receiver answered, when it answered. */
  readonly status?: number;
  /** Why there was no status: `timeout`, `network`, or `endpoint_disabled` (no request made). */
  readonly errorClass?: string;
}

export interface WebhookDeliveryActivities {
  attemptDelivery(input: AttemptDeliveryInput): Promise<AttemptDeliveryResult>;
}
