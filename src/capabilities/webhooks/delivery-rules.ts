/**
 * The numbers of the delivery rules (spec: Delivery rules, Limits), in one
 * place. The workflow gets the schedule in its input (tests shorten it);
 * these are what production passes.
 */
export interface DeliverySchedule {
  /** Attempts per round; after the last one fails the delivery is a dead letter. */
  readonly maxAttempts: number;
  /** Waits between the attempts of a round, in seconds (maxAttempts - 1 of them). */
  readonly waitsSeconds: readonly number[];
  /**
   * How long a dead letter's workflow stays open for a retry signal. A retry
   * after that starts a new workflow run with the same id.
   */
  readonly deadLetterWaitSeconds: number;
}

/** Up to 5 attempts, about 1 minute, 5 minutes, 15 minutes and 1 hour apart. */
export const DEFAULT_DELIVERY_SCHEDULE: DeliverySchedule = {
  maxAttempts: 5,
  waitsSeconds: [60, 5 * 60, 15 * 60, 60 * 60],
  deadLetterWaitSeconds: 7 * 24 * 3600,
};

/** The receiver answers any 2xx within 10 seconds. */
export const RECEIVER_TIMEOUT_MS = 10_000;

/** For 24 hours after a rotation both the new and the previous secret sign. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3_600_000;

export function checkSchedule(schedule: DeliverySchedule): void {
  if (!Number.isInteger(schedule.maxAttempts) || schedule.maxAttempts < 1) throw new Error("maxAttempts must be a positive integer");
  if (schedule.waitsSeconds.length !== schedule.maxAttempts - 1) throw new Error("one wait between each two attempts");
  if (schedule.waitsSeconds.some((s) => !(s > 0))) throw new Error("waits must be positive");
  if (!(schedule.deadLetterWaitSeconds > 0)) throw new Error("deadLetterWaitSeconds must be positive");
}
