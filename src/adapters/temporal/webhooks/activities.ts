import type { AttemptAnswer, DeliveryAttempts } from "../../../capabilities/webhooks/index.ts";

/**
 * The delivery workflow's one activity: a thin adapter to the capability's
 * attempt, which is idempotent per attempt number (a retried activity whose
 * attempt was recorded answers that record and posts nothing).
 *
 * A failed HTTP attempt is an answer, not an error: Temporal retries the
 * activity only when the attempt could not run or be recorded (database
 * down, worker lost), never because the receiver failed.
 */
export interface AttemptDeliveryInput {
  readonly companyId: string;
  readonly deliveryId: string;
  /** From 1; the attempt header. */
  readonly attempt: number;
  /** Last attempt of its round: a failure makes the delivery a dead letter. */
  readonly final: boolean;
  /** When not final: milliseconds until the next attempt, recorded as next_attempt_at. */
  readonly retryInMs: number | null;
  /** The attempt's activity ran out of tries: record it as failed, without a request (workflows/webhooks/delivery.ts). */
  readonly couldNotRun?: boolean;
}

export type AttemptDeliveryAnswer = AttemptAnswer;

export interface WebhookDeliveryActivities {
  attemptDelivery(input: AttemptDeliveryInput): Promise<AttemptDeliveryAnswer>;
}

export function createWebhookDeliveryActivities(attempts: DeliveryAttempts): WebhookDeliveryActivities {
  return {
    attemptDelivery: (input) =>
      attempts.attempt({
        companyId: input.companyId,
        deliveryId: input.deliveryId,
        number: input.attempt,
        final: input.final,
        retryInMs: input.retryInMs,
        ...(input.couldNotRun ? { couldNotRun: true } : {}),
      }),
  };
}
