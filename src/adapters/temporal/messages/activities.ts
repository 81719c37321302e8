import { Context } from "@temporalio/activity";
import { ApplicationFailure } from "@temporalio/common";
import type { MessageLifecycle } from "../../../capabilities/messages/lifecycle/message-lifecycle.ts";
import { HandoffInProgressError, TransientHandoffError } from "../../../capabilities/messages/lifecycle/message-lifecycle.ts";
import type { SendingPace } from "../../../capabilities/messages/lifecycle/sending-pace.ts";
import type { MessageStatusName } from "../../../capabilities/messages/statuses.ts";

/**
 * The message workflow's activities: thin adapters from Temporal to the
 * lifecycle domain, where every step is idempotent.
 */
export interface MessageActivities {
  /**
   * One step of sending, in a single activity to keep a message's workflow
   * short (one activity per message in the common case): end the message as
   * `suppressed` if its address is; else take a slot of the sending pace or
   * answer how long to wait for one (`waitMs` > 0, nothing else done); else
   * hand it off. Answers the status afterwards.
   */
  attemptHandOff(companyId: string, messageId: string, provider: string): Promise<HandOffAttempt>;
  markDeferred(companyId: string, messageId: string): Promise<MessageStatusName>;
}

export interface HandOffAttempt {
  readonly status: MessageStatusName;
  /** Milliseconds to wait for the sending pace; 0 when the attempt is over. */
  readonly waitMs: number;
}

/** What the activities use of the lifecycle and the sending pace. */
export type LifecycleSteps = Pick<MessageLifecycle, "attemptHandOff" | "markDeferred">;
export type PaceReservations = Pick<SendingPace, "reserve">;

/** The message activities, for the worker's activity set (`{ ...createMessageActivities(lifecycle, pace) }`). */
export function createMessageActivities(lifecycle: LifecycleSteps, pace: PaceReservations): MessageActivities {
  return {
    markDeferred: (companyId, messageId) => lifecycle.markDeferred(companyId, messageId),
    async attemptHandOff(companyId, messageId, provider) {
      // Heartbeats while the email service is talked to, so a dead
      // worker is noticed by the heartbeat timeout, not the attempt's.
      const activity = Context.current();
      try {
        return await lifecycle.attemptHandOff(companyId, messageId, () => pace.reserve(provider, companyId), {
          heartbeat: () => activity.heartbeat(),
        });
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
