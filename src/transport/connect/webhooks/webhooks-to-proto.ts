import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { AuditContext } from "../../../capabilities/audit/types.ts";
import type {
  AttemptRecord,
  CreateEndpointCommand,
  DeliveryListQuery,
  DeliveryRecord,
  DeliveryState,
  EndpointView,
  EndpointWithSecret,
  LiveStreamEnd,
  LiveStreamItem,
  RetryDeadLettersCommand,
  TestEventResult,
  TriggeredTestEvent,
  UpdateEndpointCommand,
} from "../../../capabilities/webhooks/index.ts";
import { isDeliveryState } from "../../../capabilities/webhooks/index.ts";
import { ValidationError } from "../../../contract/api-error.ts";
import { enumJsonValues, enumValueFromJson, enumValueToJson } from "../../../contract/json-codec.ts";
import {
  type CreateWebhookEndpointRequest,
  type ListWebhookDeliveriesRequest,
  type RetryWebhookDeadLettersRequest,
  type SendTestWebhookEventResponseSchema,
  StreamEndReason,
  type StreamEventsResponseSchema,
  type TriggerWebhookEventResponseSchema,
  type UpdateWebhookEndpointRequest,
  type WebhookAttempt,
  WebhookAttemptSchema,
  type WebhookDelivery,
  WebhookDeliverySchema,
  type WebhookDeliveryState,
  WebhookDeliveryStateSchema,
  type WebhookEndpoint,
  WebhookEndpointSchema,
} from "../../../gen/mail/v1/webhooks_pb.js";
import { optionalTimestamp } from "../timestamps.ts";

/**
 * The WebhooksService's messages and the webhooks capability's commands and
 * results, both ways: a request becomes a command, a result becomes a
 * response.
 */

/** The company a call acts for, and who acts (for the audit log). */
export interface CallScope {
  readonly companyId: string;
  readonly audit: AuditContext;
}

// ---------------------------------------------------------------- requests -> commands

export function createEndpointCommandOf(req: CreateWebhookEndpointRequest, scope: CallScope): CreateEndpointCommand {
  return { ...scope, url: req.url, description: req.description, events: req.events, enabled: req.enabled };
}

export function updateEndpointCommandOf(req: UpdateWebhookEndpointRequest, scope: CallScope): UpdateEndpointCommand {
  return { ...scope, endpointId: req.id, url: req.url, description: req.description, events: req.events, enabled: req.enabled };
}

/**
 * Undefined for the zero value (no filter). A number the contract does not
 * declare (a gRPC caller can send any) is a 400 naming the field, as an
 * unknown name is over REST.
 */
export function deliveryStateFromProto(state: WebhookDeliveryState | undefined): DeliveryState | undefined {
  if (state === undefined || state === 0) return undefined;
  const name = enumValueToJson(WebhookDeliveryStateSchema, state);
  if (name === undefined || !isDeliveryState(name)) {
    throw new ValidationError([{ field: "state", problem: `must be one of ${enumJsonValues(WebhookDeliveryStateSchema).join(", ")}` }]);
  }
  return name;
}

/** The deliveries query of a ListWebhookDeliveries request (its company comes from the call). */
export function deliveryListQueryOf(req: ListWebhookDeliveriesRequest): DeliveryListQuery {
  return {
    limit: req.limit,
    cursor: req.cursor,
    endpointId: req.endpointId,
    state: deliveryStateFromProto(req.state),
    event: req.event,
    since: req.since ? timestampDate(req.since) : undefined,
    until: req.until ? timestampDate(req.until) : undefined,
    messageId: req.messageId,
  };
}

export function retryDeadLettersCommandOf(req: RetryWebhookDeadLettersRequest, scope: CallScope): RetryDeadLettersCommand {
  return { ...scope, endpointId: req.id, since: req.since ? timestampDate(req.since) : undefined, dryRun: req.dryRun };
}

// ---------------------------------------------------------------- results -> responses

export function toEndpointProto(view: EndpointView): WebhookEndpoint {
  return create(WebhookEndpointSchema, {
    id: view.id,
    url: view.url,
    ...(view.description !== null ? { description: view.description } : {}),
    events: [...view.events],
    enabled: view.enabled,
    previousSecretExpiresAt: optionalTimestamp(view.previousSecretExpiresAt),
    createdAt: timestampFromDate(view.createdAt),
    updatedAt: timestampFromDate(view.updatedAt),
    health: {
      since: timestampFromDate(view.health.since),
      deliveries: view.health.deliveries,
      succeeded: view.health.succeeded,
      ...(view.health.successRate !== null ? { successRate: view.health.successRate } : {}),
      attempts: view.health.attempts,
      failedAttempts: view.health.failedAttempts,
    },
  });
}

/** The answer of create and rotate: the endpoint and its new secret (the only answers that carry one). */
export function toEndpointWithSecretProto(result: EndpointWithSecret): { endpoint: WebhookEndpoint; secret: string } {
  return { endpoint: toEndpointProto(result.endpoint), secret: result.secret };
}

export function deliveryStateToProto(state: DeliveryState): WebhookDeliveryState {
  const value = enumValueFromJson(WebhookDeliveryStateSchema, state);
  if (value === undefined) throw new Error(`contract: no WebhookDeliveryState for ${state}`);
  return value as WebhookDeliveryState;
}

export function toDeliveryProto(record: DeliveryRecord): WebhookDelivery {
  return create(WebhookDeliverySchema, {
    id: record.id,
    endpointId: record.endpointId,
    event: record.event,
    state: deliveryStateToProto(record.state),
    attemptCount: record.attemptCount,
    ...(record.lastStatus !== null ? { lastStatus: record.lastStatus } : {}),
    ...(record.lastError !== null ? { lastError: record.lastError } : {}),
    occurredAt: timestampFromDate(record.occurredAt),
    createdAt: timestampFromDate(record.createdAt),
    lastAttemptAt: optionalTimestamp(record.lastAttemptAt),
    nextAttemptAt: optionalTimestamp(record.nextAttemptAt),
  });
}

export function toAttemptProto(record: AttemptRecord): WebhookAttempt {
  return create(WebhookAttemptSchema, {
    number: record.number,
    attemptedAt: timestampFromDate(record.attemptedAt),
    durationMs: record.durationMs,
    ...(record.status !== null ? { status: record.status } : {}),
    ...(record.errorClass !== null ? { error: record.errorClass } : {}),
  });
}

export function toTestEventProto(result: TestEventResult): MessageInitShape<typeof SendTestWebhookEventResponseSchema> {
  return {
    deliveryId: result.deliveryId,
    event: result.event,
    succeeded: result.succeeded,
    ...(result.status !== null ? { status: result.status } : {}),
    ...(result.error !== null ? { error: result.error } : {}),
    durationMs: result.durationMs,
    attemptedAt: timestampFromDate(result.attemptedAt),
    body: result.body,
  };
}

// ---------------------------------------------------------------- live events

const END_REASONS: Readonly<Record<LiveStreamEnd, StreamEndReason>> = {
  max_duration: StreamEndReason.MAX_DURATION,
  shutdown: StreamEndReason.SHUTDOWN,
  interrupted: StreamEndReason.INTERRUPTED,
};

export function toStreamEventsProto(item: LiveStreamItem): MessageInitShape<typeof StreamEventsResponseSchema> {
  switch (item.kind) {
    case "ready":
      return {
        kind: {
          case: "ready",
          value: { expiresAt: timestampFromDate(item.expiresAt), keepAliveSeconds: item.keepAliveSeconds, events: [...item.events] },
        },
      };
    case "event":
      return { kind: { case: "event", value: { id: item.id, event: item.event, occurredAt: timestampFromDate(item.occurredAt), body: item.body } } };
    case "keep_alive":
      return { kind: { case: "keepAlive", value: { at: timestampFromDate(item.at) } } };
    case "end":
      return { kind: { case: "end", value: { reason: END_REASONS[item.reason] } } };
  }
}

export function toTriggeredEventProto(event: TriggeredTestEvent): MessageInitShape<typeof TriggerWebhookEventResponseSchema> {
  return { id: event.id, event: event.event, occurredAt: timestampFromDate(event.occurredAt), endpoints: event.endpoints };
}
