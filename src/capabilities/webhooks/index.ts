/**
 * The webhooks capability: endpoints (WebhookEndpoints), deliveries read and
 * retried (WebhookDeliveries), the attempt the delivery workflow makes
 * (DeliveryAttempts), "Send test event" (WebhookTestEvents), the live
 * streams of `mailctl listen` and its test events (LiveEvents) and the events
 * other services publish (WebhookEventPublisher). Each is a class built
 * from one dependencies object of ports; src/wiring/webhooks.ts builds them.
 */
export {
  DeliveryAttempts,
  type AttemptCommand,
  type AttemptResult,
  type DeliveryAttemptsDependencies,
  deliveryBody,
} from "./attempts.ts";
export {
  checkDeliveryListQuery,
  DELIVERY_CURSOR,
  WebhookDeliveries,
  type DeliveryCommand,
  type DeliveryDetail,
  type DeliveryListQuery,
  type ListDeliveriesCommand,
  type RetryDeadLettersCommand,
  type RetryDeadLettersResult,
  type RetryDeliveryCommand,
  type WebhookDeliveriesDependencies,
} from "./deliveries.ts";
export {
  WebhookEndpoints,
  HostRefusedError,
  DEFAULT_ENDPOINT_LIMITS,
  type ChangeEndpointCommand,
  type CreateEndpointCommand,
  type EndpointCommand,
  type EndpointHealth,
  type EndpointLimits,
  type EndpointView,
  type EndpointWithSecret,
  type UpdateEndpointCommand,
  type WebhookEndpointsDependencies,
} from "./endpoints.ts";
export { WebhookTestEvents, type SendTestEventCommand, type TestEventResult, type WebhookTestEventsDependencies } from "./test-events.ts";
export type { AttemptErrorClass, RecordedErrorClass, WebhookTransport } from "./delivery-attempt.ts";
export { DEFAULT_DELIVERY_SCHEDULE, RECEIVER_TIMEOUT_MS, type DeliverySchedule } from "./delivery-rules.ts";
export { DELIVERY_STATES, type DeliveryState, isDeliveryState } from "./delivery-states.ts";
export { WEBHOOK_EVENT_NAMES, type WebhookEventName } from "./events.ts";
export { DEFAULT_RESOLVE_TIMEOUT_MS, WebhookTargetPolicy, type HostResolver, type ResolvedAddress } from "./ssrf-policy.ts";
export {
  WebhookEventPublisher,
  PUBLISHABLE_EVENTS,
  type PublishEventCommand,
  type PublishedEvent,
  type WebhookEventPublisherDependencies,
} from "./published-events.ts";
export type * from "./ports.ts";
export {
  DEFAULT_LIVE_STREAM_LIMITS,
  LiveEvents,
  type LiveEventsDependencies,
  type LiveStreamEnd,
  type LiveStreamItem,
  type LiveStreamLimits,
  type StreamEventsCommand,
  type TriggeredTestEvent,
  type TriggerTestEventCommand,
} from "./live-events.ts";
