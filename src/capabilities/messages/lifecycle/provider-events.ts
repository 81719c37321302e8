import { ApiError } from "../../../contract/api-error.ts";
import type { ProviderEvent } from "../email-provider.ts";
import type { MessageStatusName } from "../statuses.ts";
import type { MessageLifecycle } from "./message-lifecycle.ts";

/**
 * The entry point of delivery, bounce and complaint reports from the email
 * service (the simulator in-process, or AdminService.ReportProviderEvent).
 * The outcome is first recorded in PostgreSQL (idempotent on the provider's
 * event id), then the message's workflow is told, so a report is never lost
 * even when the workflow has already ended.
 */
export class ProviderEventsIntake {
  readonly #lifecycle: MessageLifecycle;
  readonly #notify: (messageId: string, status: MessageStatusName) => Promise<void>;
  readonly #log: { warn(details: Record<string, unknown>, message: string): void };

  constructor(
    lifecycle: MessageLifecycle,
    notify: (messageId: string, status: MessageStatusName) => Promise<void>,
    log: { warn(details: Record<string, unknown>, message: string): void },
  ) {
    this.#lifecycle = lifecycle;
    this.#notify = notify;
    this.#log = log;
  }

  async report(event: ProviderEvent): Promise<{ applied: boolean; messageId: string }> {
    const result = await this.#lifecycle.applyProviderEvent(event);
    if (!result) {
      // Also when the report raced the recording of the handoff: the sender retries.
      throw new ApiError("NOT_FOUND", `No message with provider message id ${event.providerMessageId}.`);
    }
    if (result.applied) {
      await this.#notify(result.messageId, result.status).catch((error: unknown) => {
        // The database already has it; the workflow only mirrors the status.
        this.#log.warn({ messageId: result.messageId, err: error }, "could not signal the message workflow");
      });
    }
    return { applied: result.applied, messageId: result.messageId };
  }
}
