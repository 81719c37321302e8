import { ApiError } from "../../../contract/api-error.ts";
import type { ProviderEvent } from "../email-provider.ts";
import type { MessageLifecycle } from "./message-lifecycle.ts";
import type { OutcomeWatcher } from "./ports.ts";

/** What a provider event did to its message: `applied: false` for a repeated report (nothing changed). */
export interface ProviderEventReport {
  readonly applied: boolean;
  readonly messageId: string;
}

/**
 * The entry point of delivery, bounce and complaint reports from the email
 * service (the simulator in-process, or AdminService.ReportProviderEvent).
 * The outcome is recorded in PostgreSQL, idempotently (on the provider's
 * event id, and once per message and kind), with its event and webhooks in
 * the same transaction. The message's workflow has ended at the handoff and
 * is not told: the message log is where outcomes live.
 */
export class ProviderEventsIntake {
  readonly #lifecycle: MessageLifecycle;
  readonly #watcher: OutcomeWatcher | undefined;

  /** `watcher` hears of each bounce and complaint recorded, before the report is answered (the sending guard). */
  constructor(deps: { readonly lifecycle: MessageLifecycle; readonly watcher?: OutcomeWatcher | undefined }) {
    this.#lifecycle = deps.lifecycle;
    this.#watcher = deps.watcher;
  }

  async report(event: ProviderEvent): Promise<ProviderEventReport> {
    const result = await this.#lifecycle.applyProviderEvent(event);
    if (!result) {
      // Also when the report raced the recording of the handoff: the sender retries.
      throw new ApiError("NOT_FOUND", `No message with provider message id ${event.providerMessageId}.`);
    }
    if (this.#watcher && result.applied && (result.status === "bounced" || result.status === "complained")) {
      await this.#watcher.bounceOrComplaintRecorded({ companyId: result.companyId });
    }
    return { applied: result.applied, messageId: result.messageId };
  }
}
