import { Context } from "@temporalio/activity";
import { ApplicationFailure } from "@temporalio/common";
import type { MessageLifecycle } from "../../../capabilities/messages/lifecycle/message-lifecycle.ts";
import { HandoffInProgressError, TransientHandoffError } from "../../../capabilities/messages/lifecycle/message-lifecycle.ts";
import type { MessageActivities } from "../../../../workflows/messages/activities.ts";

/** What the message activities run: the lifecycle's steps, each idempotent. */
export interface MessageActivityDependencies {
  readonly lifecycle: Pick<MessageLifecycle, "attemptHandOff" | "markDeferred">;
}

/**
 * The message workflow's activities (workflows/messages/activities.ts):
 * thin adapters from Temporal to the lifecycle, for the worker's activity
 * set (`{ ...createMessageActivities({ lifecycle }) }`).
 */
export function createMessageActivities({ lifecycle }: MessageActivityDependencies): MessageActivities {
  return {
    markDeferred: (companyId, messageId) => lifecycle.markDeferred({ companyId, messageId }),
    async attemptHandOff(companyId, messageId, provider) {
      // Heartbeats while the email service is talked to, so a dead
      // worker is noticed by the heartbeat timeout, not the attempt's.
      const activity = Context.current();
      try {
        return await lifecycle.attemptHandOff({ companyId, messageId, provider, progress: { heartbeat: () => activity.heartbeat() } });
      } catch (error) {
        if (error instanceof HandoffInProgressError) {
          // Not a failure of the email service: come back when the other attempt's lease ends.
          throw ApplicationFailure.create({ message: error.message, type: "HandoffInProgress", nextRetryDelay: error.retryInMs });
        }
        if (error instanceof TransientHandoffError) {
          // Retryable by the workflow's policy; named so the UI shows why.
          throw ApplicationFailure.retryable(error.message, "TransientHandoff");
        }
        throw error;
      }
    },
  };
}
