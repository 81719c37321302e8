import { type Client, WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { boundedCall, START_DEADLINE_MS } from "../client.ts";
import { OutboxRelay } from "../outbox-relay.ts";
import type { MessageStore, UnstartedMessage } from "../../../capabilities/messages/ports.ts";
import { messageLifecycle, type MessageWorkflowInput } from "../../../../workflows/messages/message-lifecycle.ts";
import { MAIL_COMPANY_ID, MAIL_MESSAGE_ID, MAIL_RECIPIENT_DOMAIN, MAIL_STATUS } from "../../../../workflows/search-attributes.ts";

/**
 * Starts message workflows: soon after a message is accepted (`enqueue`,
 * off the request's path), and from an outbox relay that finds accepted
 * messages whose workflow is not known to exist (Temporal was unreachable,
 * or the process died after answering 202). The workflow id is derived
 * from the message id and duplicates are refused, so however often a
 * message is dispatched, it has one workflow.
 *
 * Accepted messages are started a few at a time (at most `maxConcurrentStarts`
 * calls to Temporal under way) and their "workflow started" marks are
 * written in batches, one statement for all the starts that completed while
 * the previous batch was being written: under load that is one statement
 * for many messages instead of one each. A message whose start failed, or
 * whose mark was not written, is still unmarked: the relay starts it again
 * (a duplicate start is refused and only marks it).
 */
export interface DispatcherOptions {
  /** The process's shared client (src/adapters/temporal/client.ts); its owner closes it. */
  readonly client: Client;
  readonly taskQueue: string;
  readonly store: Pick<MessageStore, "unstarted" | "markWorkflowStarted" | "markWorkflowsStarted">;
  readonly provider: string;
  readonly handoffTimeoutSeconds: number;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /** A start's deadline, its retries included (START_DEADLINE_MS unless told; tests shorten it). */
  readonly startDeadlineMs?: number;
  /** How often the relay looks for undispatched messages. Default 2000 ms. */
  readonly relayIntervalMs?: number;
  /** Workflow starts under way at once for accepted messages. Default 16. */
  readonly maxConcurrentStarts?: number;
}

/** Accepted messages waiting for a start, at most; beyond, the relay starts them (they are in the outbox). */
const MAX_QUEUED = 10_000;
/** Marks written per statement, at most. */
const MARK_BATCH = 500;
/**
 * close() waits for the starts under way up to their deadline plus this:
 * the client's longest wait between two tries (5 s, and its jitter). The
 * owner closes the client after close(); a retry still scheduled then
 * would throw "Channel has been shut down" from a timer, uncaught.
 */
const LONGEST_RETRY_WAIT_MS = 6_500;

export function messageWorkflowId(messageId: string): string {
  return `message-${messageId}`;
}

export class MessageDispatcher {
  readonly #options: DispatcherOptions;
  readonly #client: Client;
  readonly #relay: OutboxRelay;
  readonly #queue: UnstartedMessage[] = [];
  #starting = 0;
  readonly #started: UnstartedMessage[] = [];
  #marking: Promise<void> | undefined;
  readonly #idle = new Set<() => void>();

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#client = options.client;
    this.#relay = new OutboxRelay({
      pass: () => this.relayOnce(),
      intervalMs: options.relayIntervalMs ?? 2_000,
      log: options.log,
      failure: "outbox relay pass failed",
    });
  }

  /** Starts the message's workflow if it has none; true when it is known to exist (and is marked so). */
  async dispatch(message: UnstartedMessage): Promise<boolean> {
    if (!(await this.#start(message))) return false;
    await this.#options.store.markWorkflowStarted(message.companyId, message.id);
    return true;
  }

  /**
   * Starts the message's workflow soon, off the caller's path (the accept
   * path calls this once the message is committed). Never throws: what
   * cannot be started now is the relay's.
   */
  enqueue(message: UnstartedMessage): void {
    if (this.#queue.length >= MAX_QUEUED) return;
    // Only what a start needs: the caller's object may hold the whole message (bodies included).
    this.#queue.push({ id: message.id, companyId: message.companyId, recipientDomain: message.recipientDomain });
    this.#pump();
  }

  /** Starts the workflow; true when it exists (started now or before), false when Temporal could not be asked. */
  async #start(message: UnstartedMessage): Promise<boolean> {
    const o = this.#options;
    const input: MessageWorkflowInput = {
      messageId: message.id,
      companyId: message.companyId,
      provider: o.provider,
      handoffTimeoutSeconds: o.handoffTimeoutSeconds,
    };
    try {
      // Bounded: the client's close() waits for it, and its retries end at the deadline (boundedCall).
      await boundedCall(this.#client, o.startDeadlineMs ?? START_DEADLINE_MS, () => this.#client.workflow.start(messageLifecycle, {
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
      }));
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
        o.log.warn({ messageId: message.id, err: error }, "could not start the message workflow; the relay will retry");
        return false;
      }
    }
    return true;
  }

  #pump(): void {
    const limit = this.#options.maxConcurrentStarts ?? 16;
    while (this.#starting < limit && this.#queue.length > 0) {
      const message = this.#queue.shift() as UnstartedMessage;
      this.#starting++;
      void this.#start(message)
        .then((started) => {
          if (started) this.#started.push(message);
        })
        .finally(() => {
          this.#starting--;
          this.#markStarted();
          this.#pump();
          this.#notifyIdle();
        });
    }
  }

  /** Writes the pending marks, one statement per batch; one batch at a time. */
  #markStarted(): void {
    if (this.#marking || this.#started.length === 0) return;
    const batch = this.#started.splice(0, MARK_BATCH);
    this.#marking = this.#options.store
      .markWorkflowsStarted(batch)
      .catch((error: unknown) => this.#options.log.warn({ err: error, messages: batch.length }, "could not mark started workflows; the relay will"))
      .finally(() => {
        this.#marking = undefined;
        this.#markStarted();
        this.#notifyIdle();
      });
  }

  #notifyIdle(): void {
    if (this.#starting > 0 || this.#queue.length > 0 || this.#marking || this.#started.length > 0) return;
    for (const resolve of this.#idle) resolve();
    this.#idle.clear();
  }

  /** Resolves once every enqueued message was started (or given up on) and its mark written. */
  settled(): Promise<void> {
    return new Promise((resolve) => {
      this.#idle.add(resolve);
      this.#notifyIdle();
    });
  }

  /** One pass of the outbox relay: starts, then marks in one statement. Exposed for tests. */
  async relayOnce(): Promise<number> {
    const pending = await this.#options.store.unstarted(100, 2_000);
    const started: UnstartedMessage[] = [];
    for (const message of pending) if (await this.#start(message)) started.push(message);
    if (started.length > 0) await this.#options.store.markWorkflowsStarted(started);
    return started.length;
  }

  /** Runs relay passes every relayIntervalMs until close() (outbox-relay.ts). */
  startRelay(): void {
    this.#relay.start();
  }

  /**
   * Stops the relay (after its pass under way) and lets the starts under
   * way finish; messages still queued are left to a relay (they are in the
   * outbox). The client stays open for its owner to close.
   */
  async close(): Promise<void> {
    this.#queue.length = 0;
    await this.#relay.close();
    // Bounded: a start hanging on an unreachable Temporal must not hold the shutdown.
    let timer: NodeJS.Timeout | undefined;
    const waitMs = (this.#options.startDeadlineMs ?? START_DEADLINE_MS) + LONGEST_RETRY_WAIT_MS;
    await Promise.race([this.settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }
}
