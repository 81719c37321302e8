import type { AttemptResult, DeliveryAttempts } from "../../../capabilities/webhooks/index.ts";
import type { AttemptDeliveryResult, WebhookDeliveryActivities } from "../../../../workflows/webhooks/activities.ts";

/**
 * The delivery workflow's activity (declared in
 * workflows/webhooks/activities.ts): a thin adapter to the capability's
 * attempt, which is idempotent per attempt number (a retried activity whose
 * attempt was recorded answers that record and posts nothing).
 */
export interface WebhookDeliveryActivityDependencies {
  readonly attempts: DeliveryAttempts;
  /** Sees each attempt's result (the worker's counters). */
  readonly observe?: (result: AttemptResult) => void;
}

export function createWebhookDeliveryActivities(deps: WebhookDeliveryActivityDependencies): WebhookDeliveryActivities {
  return {
    async attemptDelivery(input): Promise<AttemptDeliveryResult> {
      const result = await deps.attempts.attempt({
        companyId: input.companyId,
        deliveryId: input.deliveryId,
        number: input.attempt,
        final: input.final,
        retryInMs: input.retryInMs,
        ...(input.couldNotRun ? { couldNotRun: true } : {}),
      });
      deps.observe?.(result);
      return result;
    },
  };
}
