import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from "@temporalio/client";
import type { MessageStore, UnstartedMessage } from "../../../capabilities/messages/ports.ts";
import type { MessageStatusName } from "../../../capabilities/messages/statuses.ts";
import { messageLifecycle, messageStatusChanged, type MessageWorkflowInput } from "../../../../workflows/messages/message-lifecycle.ts";
import { MAIL_COMPANY_ID, MAIL_MESSAGE_ID, MAIL_RECIPIENT_DOMAIN, MAIL_STATUS } from "../../../../workflows/search-attributes.ts";

/**
 * Starts message workflows: right after a message is accepted, and from an
 * outbox relay that finds accepted messages whose workflow is not known to
 * exist (Temporal was unreachable, or the process died after answering 202).
 * The workflow id is derived from the message id and duplicates are
 * refused, so however often a message is dispatched, it has one workflow.
 */
export interface DispatcherOptions {
  /** The process's shared client (src/adapters/temporal/client.ts); its owner closes it. */
  readonly client: Client;
  readonly taskQueue: string;
  readonly store: Pick<MessageStore, "unstarted" | "markWorkflowStarted">;
  readonly provider: string;
  readonly handoffTimeoutSeconds: number;
  readonly outcomeWindowHours: number;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /** How often the relay looks for undispatched messages. Default 2000 ms. */
  readonly relayIntervalMs?: number;
}

export function messageWorkflowId(messageId: string): string {
  return `message-${messageId}`;
}

export class MessageDispatcher {
  readonly #options: DispatcherOptions;
  readonly #client: Client;
  #relay: NodeJS.Timeout | undefined;
  #relayRunning: Promise<void> | undefined;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#client = options.client;
  }

  /** Starts the message's workflow if it has none; true when it is known to exist. */
  async dispatch(message: UnstartedMessage): Promise<boolean> {
    const o = this.#options;
    const input: MessageWorkflowInput = {
      messageId: message.id,
      companyId: message.companyId,
      provider: o.provider,
      handoffTimeoutSeconds: o.handoffTimeoutSeconds,
      outcomeWindowHours: o.outcomeWindowHours,
    };
    try {
      await this.#client.workflow.start(messageLifecycle, {
        workflowId: messageWorkflowId(message.id),
        taskQueue: o.taskQueue,
        args: [input],
        // Never a second workflow for a message, even after the first closed.
        workflowIdReusePolicy: "REJECT_DUPLICATE",
        typedSearchAttributes: [
          { key: MAIL_COMPANY_ID, value: message.companyId },
          { key: MAIL_MESSAGE_ID, value: message.id },
          { key: MAIL_RECIPIENT_DOMAIN, value: message.recipientDomain },
          { key: MAIL_STATUS, value: "queued" },
        ],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
        o.log.warn({ messageId: message.id, err: error }, "could not start the message workflow; the relay will retry");
        return false;
      }
    }
    await o.store.markWorkflowStarted(message.companyId, message.id);
    return true;
  }

  /** Tells a message's workflow that a provider outcome changed its status (it may have ended already). */
  async signalStatus(messageId: string, status: MessageStatusName): Promise<void> {
    try {
      await this.#client.workflow.getHandle(messageWorkflowId(messageId)).signal(messageStatusChanged, status);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return;
      throw error;
    }
  }

  /** One pass of the outbox relay. Exposed for tests. */
  async relayOnce(): Promise<number> {
    const pending = await this.#options.store.unstarted(100, 2_000);
    let started = 0;
    for (const message of pending) if (await this.dispatch(message)) started++;
    return started;
  }

  startRelay(): void {
    if (this.#relay) return;
    const tick = () => {
      this.#relayRunning = this.relayOnce()
        .then(() => undefined)
        .catch((error: unknown) => this.#options.log.warn({ err: error }, "outbox relay pass failed"))
        .finally(() => {
          if (this.#relay) this.#relay = setTimeout(tick, this.#options.relayIntervalMs ?? 2_000).unref();
        });
    };
    this.#relay = setTimeout(tick, this.#options.relayIntervalMs ?? 2_000).unref();
  }

  /** Stops the relay (after its pass under way); the client stays open for its owner to close. */
  async close(): Promise<void> {
    if (this.#relay) clearTimeout(this.#relay);
    this.#relay = undefined;
    await this.#relayRunning;
  }
}
