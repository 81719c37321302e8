/**
 * The chaos suite's shortened settings, shared by the suite and its child
 * processes (test/chaos/service-process.ts).
 */

/**
 * The webhook retry schedule of the suite's deliveries: 5 attempts like
 * production, 1 s apart instead of 1 min / 5 min / 15 min / 1 h (spec,
 * Delivery rules 3). Passed in code to the API process, whose outbox relay
 * writes it into each delivery workflow's input (WebhookDeliveryOptions.schedule).
 */
export const CHAOS_SCHEDULE = { maxAttempts: 5, waitsSeconds: [1, 1, 1, 1], deadLetterWaitSeconds: 600 } as const;

/** How long the sender waits for the receiver's answer (10 s in production): a hanging receiver costs an attempt this long. */
export const CHAOS_RECEIVER_TIMEOUT_MS = 3_000;
