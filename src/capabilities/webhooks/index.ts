import type { SecretSealer } from "../sending-setup/key-sealing.ts";
import { DeliveryAttempts } from "./attempts.ts";
import { WebhookDeliveries } from "./deliveries.ts";
import { createDeliveryCursorCodec } from "./delivery-cursor.ts";
import type { WebhookTransport } from "./delivery-attempt.ts";
import { type EndpointLimits, WebhookEndpoints } from "./endpoints.ts";
import { WebhookTestEvents } from "./test-events.ts";
import type { WebhookDeliveryStore, WebhookEndpointStore } from "./ports.ts";
import type { WebhookTargetPolicy } from "./ssrf-policy.ts";

export { DeliveryAttempts, type AttemptCommand, type AttemptResult, type RecordedErrorClass, deliveryBody } from "./attempts.ts";
export { checkDeliveryListQuery, WebhookDeliveries, type DeliveryDetail, type DeliveryListQuery, type DeliveryPage } from "./deliveries.ts";
export {
  WebhookEndpoints,
  HostRefusedError,
  DEFAULT_ENDPOINT_LIMITS,
  type EndpointHealth,
  type EndpointLimits,
  type EndpointView,
  type EndpointWithSecret,
  type CreateEndpointInput,
  type UpdateEndpointInput,
} from "./endpoints.ts";
export { WebhookTestEvents, type TestEventResult } from "./test-events.ts";
export type { AttemptErrorClass } from "./delivery-attempt.ts";
export { DEFAULT_DELIVERY_SCHEDULE, RECEIVER_TIMEOUT_MS, type DeliverySchedule } from "./delivery-rules.ts";
export { DELIVERY_STATES, type DeliveryState, isDeliveryState } from "./delivery-states.ts";
export { WEBHOOK_EVENT_NAMES, type WebhookEventName } from "./events.ts";
export { DEFAULT_RESOLVE_TIMEOUT_MS, WebhookTargetPolicy, type HostResolver } from "./ssrf-policy.ts";
export { WebhookEventPublisher, PUBLISHABLE_EVENTS, type PublishEventInput, type PublishedEvent } from "./published-events.ts";
export type * from "./ports.ts";

export interface WebhooksDependencies {
  readonly endpointStore: WebhookEndpointStore;
  readonly deliveryStore: WebhookDeliveryStore;
  /** The service's secret sealer (DATA_ENCRYPTION_KEY), shared with DKIM keys. */
  readonly sealer: SecretSealer;
  readonly policy: WebhookTargetPolicy;
  readonly transport: WebhookTransport;
  /** Bounds on a company's endpoints (default 20 per company, 3 per host). */
  readonly limits?: EndpointLimits;
  /** Secret of the deliveries list's cursors. */
  readonly cursorSecret: string;
  /** Asks the relay for a pass now (after a manual retry). */
  readonly nudge?: () => void;
  readonly clock?: () => Date;
}

/** The webhooks capability: endpoints, deliveries (read and retry) and the attempt the workflow makes. */
export interface Webhooks {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
  readonly attempts: DeliveryAttempts;
  readonly testEvents: WebhookTestEvents;
}

export function createWebhooks(deps: WebhooksDependencies): Webhooks {
  const clock = deps.clock ? { clock: deps.clock } : {};
  const endpoints = new WebhookEndpoints({
    store: deps.endpointStore,
    sealer: deps.sealer,
    policy: deps.policy,
    health: deps.deliveryStore,
    ...(deps.limits ? { limits: deps.limits } : {}),
    ...clock,
  });
  return {
    endpoints,
    deliveries: new WebhookDeliveries({
      store: deps.deliveryStore,
      endpoints: deps.endpointStore,
      cursors: createDeliveryCursorCodec(deps.cursorSecret),
      ...(deps.nudge ? { nudge: deps.nudge } : {}),
      ...clock,
    }),
    attempts: new DeliveryAttempts({ store: deps.deliveryStore, endpoints, transport: deps.transport, ...clock }),
    testEvents: new WebhookTestEvents({ store: deps.endpointStore, endpoints, transport: deps.transport, ...clock }),
  };
}
