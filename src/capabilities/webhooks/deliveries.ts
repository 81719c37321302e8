import type { AuditContext } from "../audit/types.ts";
import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { KeysetCursorKind } from "../shared/keyset-cursor.ts";
import { filterFingerprint, KeysetPager, type Page, type PageRequest, pageSize, refuseProblems } from "../shared/paging.ts";
import { deliveryBody } from "./attempts.ts";
import type { DeliveryState } from "./delivery-states.ts";
import { type ChangeEndpointCommand, endpointNotFound } from "./endpoints.ts";
import { isWebhookEventName } from "./events.ts";
import type { AttemptRecord, DeliveryFilters, DeliveryRecord, WebhookDeliveryStore, WebhookEndpointStore } from "./ports.ts";

/**
 * Reading deliveries (the Webhooks tab's list and detail) and the manual
 * retry of dead letters (spec, Delivery rules 4: a dead letter "is not
 * retried automatically and is kept for a manual retry").
 *
 * A retry is recorded first (the delivery goes back to `attempting` with a
 * retry request), then the relay tells the delivery's workflow; `nudge`
 * asks the relay to do it now rather than on its next pass. So a retry
 * asked while Temporal is unreachable is not lost.
 */

/** A deliveries query without its company: the page and the filters. */
export interface DeliveryListQuery extends PageRequest {
  readonly endpointId?: string | undefined;
  readonly state?: DeliveryState | undefined;
  readonly event?: string | undefined;
  /** Created at or after. */
  readonly since?: Date | undefined;
  /** Created before. */
  readonly until?: Date | undefined;
  /** The deliveries a message caused (events whose data names it). */
  readonly messageId?: string | undefined;
}

export interface ListDeliveriesCommand extends DeliveryListQuery {
  readonly companyId: string;
}

/** Names one delivery of the caller's company. */
export interface DeliveryCommand {
  readonly companyId: string;
  readonly deliveryId: string;
}

export interface RetryDeliveryCommand extends DeliveryCommand {
  readonly audit?: AuditContext | undefined;
}

/** Every dead letter of one endpoint created at or after `since`. */
export interface RetryDeadLettersCommand extends ChangeEndpointCommand {
  /** Required: a retry of "every dead letter ever" is never asked by omission. */
  readonly since: Date | undefined;
  /** Count them, retry nothing (the screen's "retry N deliveries?"). */
  readonly dryRun?: boolean | undefined;
}

export interface RetryDeadLettersResult {
  /** How many were put back into `attempting` (0 on a dry run). */
  readonly retried: number;
  /** How many dead letters the command took (or would take, on a dry run). */
  readonly deadLetters: number;
}

export interface DeliveryDetail {
  readonly delivery: DeliveryRecord;
  readonly attempts: AttemptRecord[];
  /** The JSON body as sent (the bytes every attempt signs). */
  readonly body: string;
}

export interface WebhookDeliveriesDependencies {
  readonly store: WebhookDeliveryStore;
  readonly endpoints: WebhookEndpointStore;
  /** Secret of the list's cursors. */
  readonly cursorSecret: string;
  /** Asks the relay for a pass now (retries are picked up by the next pass anyway). */
  readonly nudge?: () => void;
  readonly clock?: () => Date;
}

/** The cursors of the deliveries list (a MAC under this context verifies nowhere else). */
export const DELIVERY_CURSOR: KeysetCursorKind = { context: "mail.v1.webhook-deliveries.cursor.v1", label: "webhook deliveries", filters: "filters" };

/**
 * The rules of a deliveries query, without I/O: its page size, or one
 * ValidationError naming every bad field.
 */
export function checkDeliveryListQuery(query: DeliveryListQuery): number {
  const problems: FieldProblem[] = [];
  const size = pageSize(query.limit, problems);
  if (query.event !== undefined && !isWebhookEventName(query.event)) problems.push({ field: "event", problem: "is not an event name" });
  if (query.since && query.until && query.until <= query.since) problems.push({ field: "until", problem: "must be after since" });
  if (query.messageId !== undefined && (query.messageId.trim() === "" || query.messageId.length > 100)) {
    problems.push({ field: "messageId", problem: "must be a message id" });
  }
  refuseProblems(problems);
  return size;
}

export class WebhookDeliveries {
  readonly #options: WebhookDeliveriesDependencies;
  readonly #pager: KeysetPager;
  readonly #clock: () => Date;

  constructor(options: WebhookDeliveriesDependencies) {
    this.#options = options;
    this.#pager = new KeysetPager(options.cursorSecret, DELIVERY_CURSOR);
    this.#clock = options.clock ?? (() => new Date());
  }

  async list(command: ListDeliveriesCommand): Promise<Page<DeliveryRecord>> {
    const { companyId } = command;
    const size = checkDeliveryListQuery(command);
    const filters: DeliveryFilters = {
      ...(command.endpointId !== undefined ? { endpointId: command.endpointId } : {}),
      ...(command.state !== undefined ? { state: command.state } : {}),
      ...(command.event !== undefined ? { event: command.event } : {}),
      ...(command.since !== undefined ? { since: command.since } : {}),
      ...(command.until !== undefined ? { until: command.until } : {}),
      ...(command.messageId !== undefined ? { messageId: command.messageId.trim() } : {}),
    };
    const fingerprint = filterFingerprint([filters.endpointId, filters.state, filters.event, filters.since, filters.until, filters.messageId]);
    const after = this.#pager.after(companyId, fingerprint, command.cursor);
    const rows = await this.#options.store.list(companyId, filters, after, size + 1);
    return this.#pager.page(companyId, fingerprint, rows, size);
  }

  async get(command: DeliveryCommand): Promise<DeliveryDetail> {
    const { companyId, deliveryId } = command;
    const loaded = await this.#options.store.loadForAttempt(companyId, deliveryId);
    if (!loaded) throw deliveryNotFound();
    return { delivery: loaded.delivery, attempts: await this.#options.store.attempts(companyId, deliveryId), body: deliveryBody(loaded) };
  }

  /** Retries one dead letter: a new round of attempts, numbered on. */
  async retry(command: RetryDeliveryCommand): Promise<DeliveryRecord> {
    const { companyId, deliveryId, audit } = command;
    const note = audit && { context: audit, action: "webhook_delivery.retried" as const, details: {} };
    const retried = await this.#options.store.requestRetry(companyId, deliveryId, this.#clock(), note);
    if (!retried) {
      const delivery = await this.#options.store.find(companyId, deliveryId);
      if (!delivery) throw deliveryNotFound();
      throw new ValidationError([{ field: "id", problem: `only a dead_letter delivery can be retried; this one is ${delivery.state}` }]);
    }
    this.#options.nudge?.();
    return retried;
  }

  /** Retries every dead letter of one endpoint created at or after `since`, or counts them (`dryRun`). */
  async retryDeadLetters(command: RetryDeadLettersCommand): Promise<RetryDeadLettersResult> {
    const { companyId, endpointId, audit } = command;
    const { store } = this.#options;
    if (!command.since) throw new ValidationError([{ field: "since", problem: "is required" }]);
    if (!(await this.#options.endpoints.find(companyId, endpointId))) throw endpointNotFound();
    const since = command.since;
    if (command.dryRun) return { retried: 0, deadLetters: await store.countDeadLetters(companyId, endpointId, since) };
    const note = audit && { context: audit, action: "webhook_delivery.dead_letters_retried" as const, details: { since: since.toISOString() } };
    const retried = await store.requestRetryOfDeadLetters(companyId, endpointId, since, this.#clock(), note);
    if (retried > 0) this.#options.nudge?.();
    return { retried, deadLetters: retried };
  }
}

function deliveryNotFound(): ApiError {
  return new ApiError("NOT_FOUND", "No such webhook delivery.");
}
