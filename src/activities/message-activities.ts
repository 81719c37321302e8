import { ApplicationFailure } from "@temporalio/common";
import type { MessageLifecycle } from "../domain/messages/lifecycle/message-lifecycle.ts";
import { TransientHandoffError } from "../domain/messages/lifecycle/message-lifecycle.ts";
import type { SendingPace } from "../domain/messages/lifecycle/sending-pace.ts";
import type { MessageStatusName } from "../domain/messages/statuses.ts";

/**
 * The message workflow's activities: thin adapters from Temporal to the
 * lifecycle domain, where every step is idempotent.
 */
export interface MessageActivities {
  checkSuppression(companyId: string, messageId: string): Promise<MessageStatusName>;
  reserveSendingSlot(provider: string): Promise<number>;
  markDeferred(companyId: string, messageId: string): Promise<MessageStatusName>;
  handOff(companyId: string, messageId: string): Promise<MessageStatusName>;
}

export function createMessageActivities(lifecycle: MessageLifecycle, pace: SendingPace): MessageActivities {
  return {
    checkSuppression: (companyId, messageId) => lifecycle.checkSuppression(companyId, messageId),
    reserveSendingSlot: (provider) => pace.reserve(provider),
    markDeferred: (companyId, messageId) => lifecycle.markDeferred(companyId, messageId),
    async handOff(companyId, messageId) {
      try {
        return await lifecycle.handOff(companyId, messageId);
      } catch (error) {
        if (error instanceof TransientHandoffError) {
          // Retryable by the workflow's policy; named so the UI shows why.
          throw ApplicationFailure.retryable(error.message, "TransientHandoff");
        }
        throw error;
      }
    },
  };
}
