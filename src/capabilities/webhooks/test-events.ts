import { randomUUID } from "node:crypto";
import { ValidationError } from "../../contract/api-error.ts";
import type { SecretSealer } from "../sending-setup/key-sealing.ts";
import { type AttemptErrorClass, signedWebhook, webhookBody, type WebhookTransport } from "./delivery-attempt.ts";
import { endpointNotFound, type EndpointCommand, signingSecrets } from "./endpoints.ts";
import { isWebhookEventName, type WebhookEventName } from "./events.ts";
import type { WebhookEndpointStore } from "./ports.ts";

/**
 * "Send test event" of the administration screen: a signed example of one
 * event posted to an endpoint now, outside the delivery schedule, through
 * the same transport as real deliveries (the URL checked again, the same
 * receiver budget, `timeout` / `network` and nothing finer). Nothing is
 * recorded and nothing is retried; the body's `data` says `"test": true`.
 */
export interface TestEventResult {
  readonly deliveryId: string;
  readonly event: WebhookEventName;
  readonly succeeded: boolean;
  readonly status: number | null;
  readonly error: AttemptErrorClass | null;
  readonly durationMs: number;
  readonly attemptedAt: Date;
  readonly body: string;
}

/** A test event of one kind to one endpoint of the caller's company. */
export interface SendTestEventCommand extends EndpointCommand {
  readonly event: string;
}

export interface WebhookTestEventsDependencies {
  readonly store: WebhookEndpointStore;
  /** Opens the endpoint's sealed secrets to sign. */
  readonly sealer: SecretSealer;
  readonly transport: WebhookTransport;
  readonly clock?: () => Date;
}

/** Attempt number of a test event's `Service-Attempt` header. */
const TEST_ATTEMPT = 1;

export class WebhookTestEvents {
  readonly #options: WebhookTestEventsDependencies;
  readonly #clock: () => Date;

  constructor(options: WebhookTestEventsDependencies) {
    this.#options = options;
    this.#clock = options.clock ?? (() => new Date());
  }

  async send(command: SendTestEventCommand): Promise<TestEventResult> {
    const { event } = command;
    if (!isWebhookEventName(event)) throw new ValidationError([{ field: "event", problem: "is not an event name" }]);
    const endpoint = await this.#options.store.find(command.companyId, command.endpointId);
    if (!endpoint) throw endpointNotFound();

    const attemptedAt = this.#clock();
    const deliveryId = randomUUID();
    const body = webhookBody({ id: deliveryId, event, occurredAt: attemptedAt, data: exampleData(event, attemptedAt) });
    const secrets = signingSecrets(this.#options.sealer, endpoint, attemptedAt);
    const outcome = await this.#options.transport.post(signedWebhook(endpoint.url, { body, deliveryId, attempt: TEST_ATTEMPT, secrets, at: attemptedAt }));
    return {
      deliveryId,
      event,
      succeeded: outcome.ok,
      status: outcome.status ?? null,
      error: outcome.status === undefined ? (outcome.errorClass ?? "network") : null,
      durationMs: outcome.durationMs,
      attemptedAt,
      body,
    };
  }
}

/** An example `data` of each kind, marked as a test. Ids are fresh UUIDs, never real records. */
export function exampleData(event: WebhookEventName, at: Date): Record<string, unknown> {
  const common = { test: true };
  switch (event) {
    case "sent":
    case "delivered":
    case "bounced":
    case "complaint":
    case "failed":
    case "opened":
    case "clicked":
    case "unsubscribed":
    case "message.accepted":
      return { ...common, messageId: randomUUID(), email: "recipient@example.com", occurredAt: at.toISOString() };
    case "campaign.sent":
      return { ...common, campaignId: randomUUID() };
    case "campaign.click":
      return { ...common, campaignId: randomUUID(), contactId: randomUUID(), linkId: randomUUID() };
    case "contact.updated":
      return { ...common, contactId: randomUUID(), email: "contact@example.com", change: "attributes" };
    case "conversion.recorded":
      return { ...common, conversionId: randomUUID(), amount: 0, currency: "EUR" };
    case "order.event":
    case "order.created":
    case "order.paid":
      return { ...common, orderId: randomUUID(), total: 0, currency: "EUR" };
    default:
      // A kind added to the contract without an example here still gets a signed, marked delivery.
      return { ...common, occurredAt: at.toISOString() };
  }
}
