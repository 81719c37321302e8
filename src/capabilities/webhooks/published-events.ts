import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { WebhookEventName } from "./events.ts";
import { isWebhookEventName } from "./events.ts";
import type { PublishedEventRecorder } from "./ports.ts";

/**
 * Events that other internal services report for webhook delivery (the
 * EventsService): campaign engagement and connected-store orders. Each kind
 * takes its own data, checked here field by field, and becomes the `data`
 * of the delivery body exactly as the spec's Event kinds table lists it:
 *
 * - campaign recipient kinds (`sent`, `delivered`, `bounced`, `complaint`,
 *   `failed`, `opened`, `unsubscribed`): campaignId, recipientId,
 *   contactId, email, occurredAt; `clicked` adds linkId; `campaign.click`
 *   adds linkId and suspect;
 * - `campaign.sent`: campaignId, accepted, failed, suppressed, skipped,
 *   unknown, occurredAt;
 * - `order.event`, `order.created`, `order.paid`: integrationId, provider,
 *   order.
 *
 * The kinds the service writes itself (transactional messages' events are
 * recorded with their status change; `message.accepted`, `contact.updated`,
 * `conversion.recorded` likewise) cannot be published. Recording is
 * idempotent on the caller's event id, per company.
 */

/** Which data a kind takes. */
type DataShape = "campaign" | "campaignSent" | "order";

const SHAPE_OF: Readonly<Partial<Record<WebhookEventName, DataShape>>> = {
  sent: "campaign",
  delivered: "campaign",
  bounced: "campaign",
  complaint: "campaign",
  failed: "campaign",
  opened: "campaign",
  clicked: "campaign",
  unsubscribed: "campaign",
  "campaign.click": "campaign",
  "campaign.sent": "campaignSent",
  "order.event": "order",
  "order.created": "order",
  "order.paid": "order",
};

/** The kinds that can be published, in the spec's order. */
export const PUBLISHABLE_EVENTS: readonly WebhookEventName[] = Object.keys(SHAPE_OF) as WebhookEventName[];

const WITH_LINK: ReadonlySet<string> = new Set(["clicked", "campaign.click"]);
const WITH_SUSPECT: ReadonlySet<string> = new Set(["campaign.click"]);

export const MAX_EVENT_ID_LENGTH = 200;
const MAX_ID_LENGTH = 200;
const MAX_EMAIL_LENGTH = 254;

export interface CampaignRecipientData {
  readonly campaignId: string;
  readonly recipientId: string;
  readonly contactId: string;
  readonly email: string;
  readonly linkId?: string | undefined;
  readonly suspect?: boolean | undefined;
}

export interface CampaignSentData {
  readonly campaignId: string;
  readonly accepted: number;
  readonly failed: number;
  readonly suppressed: number;
  readonly skipped: number;
  readonly unknown: number;
}

export interface OrderData {
  readonly integrationId: string;
  readonly provider: string;
  /** The order as the store reported it; undefined when not sent. */
  readonly order: Readonly<Record<string, unknown>> | undefined;
}

/** An event another service publishes, for its company; at most one of the data fields is set. */
export interface PublishEventCommand {
  readonly companyId: string;
  /** The caller's stable id of the event. */
  readonly eventId: string;
  readonly event: string;
  readonly occurredAt: Date | undefined;
  readonly campaign?: CampaignRecipientData | undefined;
  readonly campaignSent?: CampaignSentData | undefined;
  readonly order?: OrderData | undefined;
}

export interface PublishedEvent {
  /** Id of the outbox row. */
  readonly id: string;
  /** True when the caller's event id had been published before: nothing new was recorded. */
  readonly replayed: boolean;
}

/** The field names of the data shapes as the caller wrote them (the contract's JSON names). */
const SHAPE_FIELD: Readonly<Record<DataShape, string>> = { campaign: "campaign", campaignSent: "campaignSent", order: "order" };

export interface WebhookEventPublisherDependencies {
  readonly recorder: PublishedEventRecorder;
  /** Asks the outbox relay for a pass now (a new event is picked up by its next pass anyway). */
  readonly nudge?: () => void;
}

export class WebhookEventPublisher {
  readonly #recorder: PublishedEventRecorder;
  readonly #nudge: (() => void) | undefined;

  constructor(options: WebhookEventPublisherDependencies) {
    this.#recorder = options.recorder;
    this.#nudge = options.nudge;
  }

  async publish(command: PublishEventCommand): Promise<PublishedEvent> {
    const { event, data, occurredAt } = checkPublishedEvent(command);
    const outcome = await this.#recorder.record(command.companyId, { callerEventId: command.eventId, event, occurredAt, data });
    switch (outcome.kind) {
      case "recorded":
        this.#nudge?.();
        return { id: outcome.id, replayed: false };
      case "replayed":
        return { id: outcome.id, replayed: true };
      case "conflict":
        throw new ApiError("IDEMPOTENCY_CONFLICT", `The event id ${JSON.stringify(command.eventId)} was already published with another event.`);
      case "no_company":
        throw new ApiError("NOT_FOUND", "No such company.");
    }
  }
}

/** The checked event and the `data` of its delivery body, or a ValidationError naming each bad field. */
export function checkPublishedEvent(input: PublishEventCommand): { event: WebhookEventName; occurredAt: Date; data: Record<string, unknown> } {
  const problems: FieldProblem[] = [];
  if (input.companyId.trim() === "") problems.push({ field: "companyId", problem: "is required" });
  if (input.eventId.trim() === "") problems.push({ field: "eventId", problem: "is required" });
  else if ([...input.eventId].length > MAX_EVENT_ID_LENGTH) problems.push({ field: "eventId", problem: `must be at most ${MAX_EVENT_ID_LENGTH} characters` });
  const occurredAt = input.occurredAt;
  if (!occurredAt || Number.isNaN(occurredAt.getTime())) problems.push({ field: "occurredAt", problem: "is required" });

  const given: DataShape[] = (["campaign", "campaignSent", "order"] as const).filter((shape) => input[shape] !== undefined);
  const shape = isWebhookEventName(input.event) ? SHAPE_OF[input.event] : undefined;
  if (input.event === "") {
    problems.push({ field: "event", problem: "is required" });
  } else if (!isWebhookEventName(input.event)) {
    problems.push({ field: "event", problem: `is not an event name; publishable: ${PUBLISHABLE_EVENTS.join(", ")}` });
  } else if (!shape) {
    problems.push({ field: "event", problem: `${input.event} is recorded by the service itself and cannot be published` });
  } else {
    for (const other of given) {
      if (other !== shape) problems.push({ field: SHAPE_FIELD[other], problem: `is not the data of ${input.event}; send ${SHAPE_FIELD[shape]}` });
    }
    if (!given.includes(shape)) problems.push({ field: SHAPE_FIELD[shape], problem: `is required for ${input.event}` });
  }

  let data: Record<string, unknown> = {};
  const at = occurredAt?.toISOString() ?? "";
  if (shape === "campaign" && input.campaign) data = campaignData(input.event, input.campaign, at, problems);
  if (shape === "campaignSent" && input.campaignSent) data = campaignSentData(input.campaignSent, at, problems);
  if (shape === "order" && input.order) data = orderData(input.order, problems);

  if (problems.length > 0 || !occurredAt) throw new ValidationError(problems);
  return { event: input.event as WebhookEventName, occurredAt, data };
}

function requiredId(value: string, field: string, problems: FieldProblem[]): string {
  const trimmed = value.trim();
  if (trimmed === "") problems.push({ field, problem: "is required" });
  else if ([...trimmed].length > MAX_ID_LENGTH) problems.push({ field, problem: `must be at most ${MAX_ID_LENGTH} characters` });
  return trimmed;
}

function campaignData(event: string, campaign: CampaignRecipientData, occurredAt: string, problems: FieldProblem[]): Record<string, unknown> {
  const data: Record<string, unknown> = {
    campaignId: requiredId(campaign.campaignId, "campaign.campaignId", problems),
    recipientId: requiredId(campaign.recipientId, "campaign.recipientId", problems),
    contactId: requiredId(campaign.contactId, "campaign.contactId", problems),
    email: checkEmail(campaign.email, problems),
    occurredAt,
  };
  if (WITH_LINK.has(event)) {
    if (campaign.linkId === undefined) problems.push({ field: "campaign.linkId", problem: `is required for ${event}` });
    else data.linkId = requiredId(campaign.linkId, "campaign.linkId", problems);
  } else if (campaign.linkId !== undefined) {
    problems.push({ field: "campaign.linkId", problem: `is only for ${[...WITH_LINK].join(" and ")}` });
  }
  if (WITH_SUSPECT.has(event)) {
    if (campaign.suspect === undefined) problems.push({ field: "campaign.suspect", problem: `is required for ${event}` });
    else data.suspect = campaign.suspect;
  } else if (campaign.suspect !== undefined) {
    problems.push({ field: "campaign.suspect", problem: `is only for ${[...WITH_SUSPECT].join(" and ")}` });
  }
  return data;
}

function checkEmail(email: string, problems: FieldProblem[]): string {
  const trimmed = email.trim();
  if (trimmed === "") problems.push({ field: "campaign.email", problem: "is required" });
  else if (trimmed.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed)) {
    problems.push({ field: "campaign.email", problem: "is not an email address" });
  }
  return trimmed;
}

const COUNTS = ["accepted", "failed", "suppressed", "skipped", "unknown"] as const;

function campaignSentData(sent: CampaignSentData, occurredAt: string, problems: FieldProblem[]): Record<string, unknown> {
  const data: Record<string, unknown> = { campaignId: requiredId(sent.campaignId, "campaignSent.campaignId", problems) };
  for (const name of COUNTS) {
    const value = sent[name];
    if (!Number.isSafeInteger(value) || value < 0) problems.push({ field: `campaignSent.${name}`, problem: "must be a whole number, zero or more" });
    data[name] = value;
  }
  data.occurredAt = occurredAt;
  return data;
}

function orderData(order: OrderData, problems: FieldProblem[]): Record<string, unknown> {
  const data: Record<string, unknown> = {
    integrationId: requiredId(order.integrationId, "order.integrationId", problems),
    provider: requiredId(order.provider, "order.provider", problems),
    order: order.order ?? null,
  };
  if (order.order === undefined) problems.push({ field: "order.order", problem: "is required" });
  return data;
}
