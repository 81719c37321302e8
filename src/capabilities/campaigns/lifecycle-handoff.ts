import type { MessageLifecycle } from "../messages/lifecycle/message-lifecycle.ts";
import { HandoffInProgressError, TransientHandoffError } from "../messages/lifecycle/message-lifecycle.ts";
import type { MessageStore } from "../messages/ports.ts";
import type { MessageStatusName } from "../messages/statuses.ts";
import type { CampaignCopy, CampaignHandoffPort, HandoffOutcome } from "./ports.ts";

export interface LifecycleHandoffDependencies {
  readonly store: Pick<MessageStore, "insertCampaignCopy">;
  readonly lifecycle: Pick<MessageLifecycle, "attemptHandOff" | "providerName">;
  /** Tries of a copy the email service could not take before it counts `unknown`. Default 5. */
  readonly transientTries?: number;
  /** The first wait after such a try (doubling). Default 1000 ms. */
  readonly retryBaseMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * A campaign copy handed over by the message lifecycle itself (the send
 * path's suppression check, sending pace, credit, DKIM, handoff lease and
 * delivery loop): the copy is a message whose id is its recipient's, and
 * one lifecycle attempt hands it over, at the campaign's priority. The pace
 * is waited for here, inside the batch's activity (no timer per recipient).
 *
 * A copy the email service keeps turning away (`failed_transient`) is tried
 * `transientTries` times and then counted `unknown`: its handoff's outcome
 * could not be learned, and the campaign goes on.
 */
export class LifecycleCampaignHandoff implements CampaignHandoffPort {
  readonly #deps: LifecycleHandoffDependencies;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(deps: LifecycleHandoffDependencies) {
    this.#deps = deps;
    this.#sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  recordCopy(copy: CampaignCopy): Promise<void> {
    return this.#deps.store.insertCampaignCopy({
      id: copy.id,
      companyId: copy.companyId,
      campaign: { campaignId: copy.campaignId, contactId: copy.contactId },
      recipient: copy.recipient,
      senderId: copy.senderId,
      fromEmail: copy.fromEmail,
      fromName: copy.fromName,
      replyTo: copy.replyTo,
      subject: copy.subject,
      html: copy.html,
      text: copy.text,
      templateId: copy.templateId,
      headers: copy.headers,
    });
  }

  async handOver(companyId: string, messageId: string, heartbeat: () => void): Promise<HandoffOutcome> {
    const { lifecycle } = this.#deps;
    const tries = this.#deps.transientTries ?? 5;
    let transient = 0;
    for (;;) {
      heartbeat();
      try {
        const attempt = await lifecycle.attemptHandOff({
          companyId,
          messageId,
          provider: lifecycle.providerName,
          priority: "campaign",
          progress: { heartbeat },
        });
        if (attempt.waitMs === 0) return outcomeOf(attempt.status);
        await this.#pause(attempt.waitMs, heartbeat);
      } catch (error) {
        if (error instanceof HandoffInProgressError) {
          await this.#pause(error.retryInMs, heartbeat);
        } else if (error instanceof TransientHandoffError) {
          transient += 1;
          if (transient >= tries) return "unknown";
          await this.#pause((this.#deps.retryBaseMs ?? 1_000) * 2 ** (transient - 1), heartbeat);
        } else {
          throw error;
        }
      }
    }
  }

  /** Waits, telling the runner it is alive at least every second. */
  async #pause(ms: number, heartbeat: () => void): Promise<void> {
    for (let left = ms; left > 0; left -= 1_000) {
      await this.#sleep(Math.min(left, 1_000));
      heartbeat();
    }
  }
}

/** A message status after its handoff, as the campaign counters count it. */
export function outcomeOf(status: MessageStatusName): HandoffOutcome {
  switch (status) {
    case "suppressed":
      return "suppressed";
    case "failed":
    case "rejected":
      return "failed";
    case "queued":
    case "deferred":
    case "processing":
      return "unknown";
    default:
      return "accepted";
  }
}
