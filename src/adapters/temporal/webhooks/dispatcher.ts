import { type Client, WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { boundedCall, START_DEADLINE_MS } from "../client.ts";
import { OutboxRelay } from "../outbox-relay.ts";
import { checkSchedule, DEFAULT_DELIVERY_SCHEDULE, type DeliverySchedule } from "../../../capabilities/webhooks/delivery-rules.ts";
import type { DeliveryToDispatch, WebhookOutbox } from "../../../capabilities/webhooks/ports.ts";
import { retryDelivery, webhookDelivery, type WebhookDeliveryInput } from "../../../../workflows/webhooks/delivery.ts";
import { WEBHOOK_COMPANY_ID, WEBHOOK_DELIVERY_STATUS, WEBHOOK_ENDPOINT_ID, WEBHOOK_EVENT } from "../../../../workflows/search-attributes.ts";

/**
 * The webhook outbox relay: from recorded events to running delivery
 * workflows, in three steps per pass:
 *
 * 1. fan-out: events of the webhook_event outbox become one delivery per
 *    subscribed endpoint (in PostgreSQL, one statement per batch);
 * 2. start: each delivery whose workflow is not known to exist gets one,
 *    id `webhook-delivery-<deliveryId>`; a second start of the same id is
 *    refused (REJECT_DUPLICATE, even after the first closed), so however
 *    often a delivery is dispatched it has one workflow;
 * 3. retries: a manual retry recorded on a dead letter is passed to its
 *    workflow as the `retry` signal, or, when that workflow has closed, starts
 *    a new run of the same id that goes on numbering attempts.
 *
 * Every step is idempotent, and a step that fails (Temporal unreachable)
 * is simply done again by a later pass. Several processes may run the
 * relay at once.
 *
 * When passes run (the loop is outbox-relay.ts's): at once on a wake-up
 * (`wakeUps`: PostgreSQL NOTIFY on every recorded event or retry request,
 * src/adapters/postgres/webhooks/webhook-work-feed.ts; `kick()` in this
 * process), and every relayIntervalMs as the fallback for a notice lost
 * with its connection. Wake-ups during a pass are folded into one more
 * pass after it.
 *
 * Where it runs: in each worker process (src/wiring/worker.ts), starting
 * through that worker's own connection with eager start (startThrough), so
 * a delivery's first workflow task comes back in the start's answer and
 * runs there at once. API processes do not run it.
 */
export interface WebhookDispatcherOptions {
  readonly client: Client;
  readonly taskQueue: string;
  readonly outbox: WebhookOutbox;
  /** Default: the spec's (5 attempts, 1 min, 5 min, 15 min, 1 h). */
  readonly schedule?: DeliverySchedule;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /** Pause between relay passes. Default 1000 ms. */
  readonly relayIntervalMs?: number;
  /** Rows per step and pass. Default 100. */
  readonly batchSize?: number;
  /** Workflow starts in flight at once within a pass. Default 16. */
  readonly startConcurrency?: number;
  /**
   * Opened by startRelay(), closed by close(): calls `wake` whenever there
   * may be work (a NOTIFY), which runs a pass now. Optional: without it the
   * relay polls.
   */
  readonly wakeUps?: (wake: () => void) => { close(): Promise<void> };
}

export function webhookDeliveryWorkflowId(deliveryId: string): string {
  return `webhook-delivery-${deliveryId}`;
}

/** The workflow input of a delivery: production passes the spec's schedule. */
export function deliveryWorkflowInput(
  delivery: Pick<DeliveryToDispatch, "id" | "companyId">,
  schedule: DeliverySchedule = DEFAULT_DELIVERY_SCHEDULE,
  firstAttempt = 1,
): WebhookDeliveryInput {
  return {
    companyId: delivery.companyId,
    deliveryId: delivery.id,
    firstAttempt,
    maxAttempts: schedule.maxAttempts,
    waitsSeconds: [...schedule.waitsSeconds],
    deadLetterWaitSeconds: schedule.deadLetterWaitSeconds,
  };
}

export interface RelayPass {
  readonly fannedOut: number;
  readonly started: number;
  readonly retried: number;
}

export class WebhookDeliveryDispatcher {
  readonly #options: WebhookDispatcherOptions;
  readonly #schedule: DeliverySchedule;
  readonly #batch: number;
  readonly #relay: OutboxRelay;
  #eagerClient: Client | undefined;

  constructor(options: WebhookDispatcherOptions) {
    this.#options = options;
    this.#schedule = options.schedule ?? DEFAULT_DELIVERY_SCHEDULE;
    checkSchedule(this.#schedule);
    this.#batch = options.batchSize ?? 100;
    this.#relay = new OutboxRelay({
      pass: () => this.relayOnce(),
      intervalMs: options.relayIntervalMs ?? 1_000,
      log: options.log,
      failure: "webhook relay pass failed",
      wakeUps: options.wakeUps,
    });
  }

  /**
   * Starts through `client` from now on, with eager start (undefined: back to
   * the options' client). `client` must be over the connection of a worker of
   * this process polling the same task queue (RunningWorker.client): Temporal
   * then answers the start with the workflow's first task, which that worker
   * runs at once, without the trip through the task queue to a poller
   *. Temporal falls back to the task queue by itself when
   * that worker has no free slot. Set it back before that worker stops.
   */
  startThrough(client: Client | undefined): void {
    this.#eagerClient = client;
  }

  /** Starts the delivery's workflow if it has none; true when it is known to exist. */
  async start(delivery: DeliveryToDispatch): Promise<boolean> {
    const o = this.#options;
    const eager = this.#eagerClient;
    try {
      const client = eager ?? o.client;
      // Bounded: the client's close() waits for it, and its retries end at the deadline (boundedCall).
      await boundedCall(client, START_DEADLINE_MS, () => client.workflow.start(webhookDelivery, {
        workflowId: webhookDeliveryWorkflowId(delivery.id),
        taskQueue: o.taskQueue,
        args: [deliveryWorkflowInput(delivery, this.#schedule)],
        workflowIdReusePolicy: "REJECT_DUPLICATE",
        typedSearchAttributes: searchAttributes(delivery, "pending"),
        ...(eager ? { requestEagerStart: true } : {}),
      }));
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
        o.log.warn({ deliveryId: delivery.id, err: error }, "could not start the webhook delivery workflow; the relay will retry");
        return false;
      }
    }
    await o.outbox.markWorkflowStarted(delivery.companyId, delivery.id);
    return true;
  }

  /**
   * Passes a retry request to the delivery's workflow: the `retry` signal to
   * a running one, or a new run of the same id when it has closed (the
   * reuse policy allows that here and only here).
   */
  async passRetry(delivery: DeliveryToDispatch): Promise<boolean> {
    const o = this.#options;
    if (delivery.retryRequest === null) return true;
    try {
      await boundedCall(o.client, START_DEADLINE_MS, () => o.client.workflow.signalWithStart(webhookDelivery, {
        workflowId: webhookDeliveryWorkflowId(delivery.id),
        taskQueue: o.taskQueue,
        args: [deliveryWorkflowInput(delivery, this.#schedule, delivery.attemptCount + 1)],
        workflowIdReusePolicy: "ALLOW_DUPLICATE",
        typedSearchAttributes: searchAttributes(delivery, "attempting"),
        signal: retryDelivery,
        signalArgs: [],
      }));
    } catch (error) {
      o.log.warn({ deliveryId: delivery.id, err: error }, "could not pass a webhook retry to its workflow; the relay will retry");
      return false;
    }
    await o.outbox.markWorkflowStarted(delivery.companyId, delivery.id);
    await o.outbox.clearRetryRequest(delivery.companyId, delivery.id, delivery.retryRequest);
    return true;
  }

  /** One pass of the relay. Exposed for tests. */
  async relayOnce(): Promise<RelayPass> {
    const { outbox } = this.#options;
    let fannedOut = 0;
    for (;;) {
      const taken = await outbox.fanOut(this.#batch);
      fannedOut += taken;
      if (taken < this.#batch) break;
    }
    // Starts are independent round trips to Temporal: several at once, and
    // batch after batch while batches come full and every start succeeds
    // (a backlog drains in one pass; an unreachable Temporal ends it).
    let started = 0;
    for (;;) {
      const batch = await outbox.unstarted(this.#batch, 0);
      const done = (await inParallel(batch, this.#options.startConcurrency ?? 16, (delivery) => this.start(delivery))).filter(Boolean).length;
      started += done;
      if (batch.length < this.#batch || done < batch.length) break;
    }
    let retried = 0;
    for (const delivery of await outbox.retryRequests(this.#batch)) if (await this.passRetry(delivery)) retried++;
    return { fannedOut, started, retried };
  }

  /** Runs relay passes every relayIntervalMs until close(). */
  startRelay(): void {
    this.#relay.start();
  }

  /**
   * Asks for a pass now (an event published or a retry requested in this
   * process); if a pass is under way, another follows it. Nothing without
   * startRelay(): the relay runs beside a worker (src/wiring/worker.ts),
   * which hears the same work through PostgreSQL NOTIFY and starts it
   * eagerly; a pass here would race it with a plain start.
   */
  kick(): void {
    this.#relay.kick();
  }

  async close(): Promise<void> {
    await this.#relay.close();
  }
}

/** `work` over `items`, at most `limit` at a time; answers in the order of `items`. */
async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

function searchAttributes(delivery: DeliveryToDispatch, status: string) {
  return [
    { key: WEBHOOK_COMPANY_ID, value: delivery.companyId },
    { key: WEBHOOK_ENDPOINT_ID, value: delivery.endpointId },
    { key: WEBHOOK_EVENT, value: delivery.event },
    { key: WEBHOOK_DELIVERY_STATUS, value: status },
  ];
}
