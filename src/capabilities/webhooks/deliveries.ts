import type { AuditContext } from "../audit/types.ts";
import { createHash } from "node:crypto";
import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { deliveryBody } from "./attempts.ts";
import type { DeliveryCursorCodec } from "./delivery-cursor.ts";
import type { DeliveryState } from "./delivery-states.ts";
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
export interface DeliveryListQuery {
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
  readonly endpointId?: string | undefined;
  readonly state?: DeliveryState | undefined;
  readonly event?: string | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  /** The deliveries a message caused (events whose data names it). */
  readonly messageId?: string | undefined;
}

export interface DeliveryPage {
  readonly items: DeliveryRecord[];
  readonly nextCursor: string | null;
}

export interface DeliveryDetail {
  readonly delivery: DeliveryRecord;
  readonly attempts: AttemptRecord[];
  /** The JSON body as sent (the bytes every attempt signs). */
  readonly body: string;
}



export interface WebhookDeliveriesOptions {
  readonly store: WebhookDeliveryStore;
  readonly endpoints: WebhookEndpointStore;
  readonly cursors: DeliveryCursorCodec;
  /** Asks the relay for a pass now (retries are picked up by the next pass anyway). */
  readonly nudge?: () => void;
  readonly clock?: () => Date;
}

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/**
 * The rules of a deliveries query, without I/O: its page size, or one
 * ValidationError naming every bad filter.
 */
export function checkDeliveryListQuery(query: DeliveryListQuery): number {
  const problems: FieldProblem[] = [];
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    problems.push({ field: "limit", problem: `must be between 1 and ${MAX_PAGE_SIZE}` });
  }
  if (query.event !== undefined && !isWebhookEventName(query.event)) problems.push({ field: "event", problem: "is not an event name" });
  if (query.since && query.until && query.until <= query.since) problems.push({ field: "until", problem: "must be after since" });
  if (query.messageId !== undefined && (query.messageId.trim() === "" || query.messageId.length > 100)) {
    problems.push({ field: "messageId", problem: "must be a message id" });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return limit;
}

export class WebhookDeliveries {
  readonly #options: WebhookDeliveriesOptions;
  readonly #clock: () => Date;

  constructor(options: WebhookDeliveriesOptions) {
    this.#options = options;
    this.#clock = options.clock ?? (() => new Date());
  }

  async list(companyId: string, query: DeliveryListQuery): Promise<DeliveryPage> {
    const limit = checkDeliveryListQuery(query);
    const filters: DeliveryFilters = {
      ...(query.endpointId !== undefined ? { endpointId: query.endpointId } : {}),
      ...(query.state !== undefined ? { state: query.state } : {}),
      ...(query.event !== undefined ? { event: query.event } : {}),
      ...(query.since !== undefined ? { since: query.since } : {}),
      ...(query.until !== undefined ? { until: query.until } : {}),
      ...(query.messageId !== undefined ? { messageId: query.messageId.trim() } : {}),
    };
    const fingerprint = filtersFingerprint(filters);
    const after = query.cursor ? this.#options.cursors.decode(query.cursor, companyId, fingerprint) : null;
    const rows = await this.#options.store.list(companyId, filters, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map((row) => row.delivery),
      nextCursor: rows.length > limit && last ? this.#options.cursors.encode(companyId, fingerprint, last.position) : null,
    };
  }

  async get(companyId: string, deliveryId: string): Promise<DeliveryDetail> {
    const loaded = await this.#options.store.loadForAttempt(companyId, deliveryId);
    if (!loaded) throw notFound();
    return { delivery: loaded.delivery, attempts: await this.#options.store.attempts(companyId, deliveryId), body: deliveryBody(loaded) };
  }

  /** Retries one dead letter: a new round of attempts, numbered on. */
  async retry(companyId: string, deliveryId: string, audit?: AuditContext): Promise<DeliveryRecord> {
    const note = audit && { context: audit, action: "webhook_delivery.retried" as const, details: {} };
    const retried = await this.#options.store.requestRetry(companyId, deliveryId, this.#clock(), note);
    if (!retried) {
      const delivery = await this.#options.store.find(companyId, deliveryId);
      if (!delivery) throw notFound();
      throw new ValidationError([{ field: "id", problem: `only a dead_letter delivery can be retried; this one is ${delivery.state}` }]);
    }
    this.#options.nudge?.();
    return retried;
  }

  /** Retries every dead letter of one endpoint created at or after `since`; answers how many. */
  async retryDeadLetters(companyId: string, endpointId: string, since: Date | undefined, audit?: AuditContext): Promise<number> {
    const from = await this.#deadLetterScope(companyId, endpointId, since);
    const note = audit && { context: audit, action: "webhook_delivery.dead_letters_retried" as const, details: { since: from.toISOString() } };
    const count = await this.#options.store.requestRetryOfDeadLetters(companyId, endpointId, from, this.#clock(), note);
    if (count > 0) this.#options.nudge?.();
    return count;
  }

  /** How many dead letters retryDeadLetters would take now (the screen's "retry N deliveries?"). */
  async countDeadLetters(companyId: string, endpointId: string, since: Date | undefined): Promise<number> {
    return this.#options.store.countDeadLetters(companyId, endpointId, await this.#deadLetterScope(companyId, endpointId, since));
  }

  async #deadLetterScope(companyId: string, endpointId: string, since: Date | undefined): Promise<Date> {
    if (!since) throw new ValidationError([{ field: "since", problem: "is required" }]);
    if (!(await this.#options.endpoints.find(companyId, endpointId))) throw new ApiError("NOT_FOUND", "No such webhook endpoint.");
    return since;
  }
}

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "No such webhook delivery.");
}

/** Binds a cursor to the filters it was issued for. */
function filtersFingerprint(filters: DeliveryFilters): string {
  const canonical = JSON.stringify([
    filters.endpointId ?? null,
    filters.state ?? null,
    filters.event ?? null,
    filters.since?.toISOString() ?? null,
    filters.until?.toISOString() ?? null,
    // Appended only when set: cursors issued before this filter existed stay valid.
    ...(filters.messageId !== undefined ? [filters.messageId] : []),
  ]);
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 16);
}
