import type { SecretSealer } from "../sending-setup/key-sealing.ts";
import { type AttemptOutcome, type RecordedErrorClass, signedWebhook, webhookBody, type WebhookTransport } from "./delivery-attempt.ts";
import type { DeliveryState } from "./delivery-states.ts";
import { signingSecrets } from "./endpoints.ts";
import type { DeliveryToAttempt, WebhookDeliveryStore } from "./ports.ts";

/**
 * One attempt of a delivery, as the delivery workflow asks for it: build
 * the body, sign it with the endpoint's live secrets, post it, record the
 * outcome with the delivery's new state. Idempotent per attempt number: a
 * retried activity whose attempt was already recorded answers that record
 * and posts nothing.
 */

export interface AttemptCommand {
  readonly companyId: string;
  readonly deliveryId: string;
  /** From 1; sent as the attempt header. */
  readonly number: number;
  /** The last attempt of its round: a failure makes the delivery a dead letter. */
  readonly final: boolean;
  /** When not final: how long until the next attempt (recorded as next_attempt_at). */
  readonly retryInMs: number | null;
  /**
   * The attempt could not be made at all (its activity ran out of tries: an
   * endpoint secret no configured key opens, ...): recorded as a `network`
   * failure without a request, so the round goes on and its last failure
   * makes a dead letter. The detail is in the worker's log.
   */
  readonly couldNotRun?: boolean;
}

export interface AttemptResult {
  /** `gone`: the delivery or its endpoint was deleted; nothing more to do. */
  readonly state: DeliveryState | "gone";
  readonly status?: number;
  readonly errorClass?: RecordedErrorClass;
}

export interface DeliveryAttemptsDependencies {
  readonly store: WebhookDeliveryStore;
  /** Opens the endpoint's sealed secrets to sign. */
  readonly sealer: SecretSealer;
  readonly transport: WebhookTransport;
  readonly clock?: () => Date;
}

/** The JSON body of a delivery (spec: Delivery request). */
export function deliveryBody(loaded: DeliveryToAttempt): string {
  const { delivery, data } = loaded;
  return webhookBody({ id: delivery.id, event: delivery.event, occurredAt: delivery.occurredAt, data });
}

export class DeliveryAttempts {
  readonly #store: WebhookDeliveryStore;
  readonly #sealer: SecretSealer;
  readonly #transport: WebhookTransport;
  readonly #clock: () => Date;

  constructor(options: DeliveryAttemptsDependencies) {
    this.#store = options.store;
    this.#sealer = options.sealer;
    this.#transport = options.transport;
    this.#clock = options.clock ?? (() => new Date());
  }

  async attempt(command: AttemptCommand): Promise<AttemptResult> {
    const { companyId, deliveryId, number } = command;
    // The delivery and an earlier record of this attempt in one read: it is on the way to the first post.
    const read = await this.#store.loadAttempt(companyId, deliveryId, number);
    if (!read) return { state: "gone" };
    const { loaded, earlier } = read;
    if (loaded.delivery.state === "succeeded") return { state: "succeeded" };

    if (earlier) return { state: loaded.delivery.state, ...resultFields(earlier.status, earlier.errorClass) };

    const attemptedAt = this.#clock();
    // A disabled endpoint gets no request; the attempt fails, so it can be retried once enabled again.
    const outcome: RecordedOutcome = command.couldNotRun
      ? { ok: false, errorClass: "network", durationMs: 0 }
      : loaded.endpoint.enabled
        ? await this.#post(loaded, number, attemptedAt)
        : { ok: false, errorClass: "endpoint_disabled", durationMs: 0 };
    const state: DeliveryState = outcome.ok ? "succeeded" : command.final ? "dead_letter" : "attempting";
    const nextAttemptAt =
      state === "attempting" && command.retryInMs !== null ? new Date(attemptedAt.getTime() + outcome.durationMs + command.retryInMs) : null;

    const recorded = await this.#store.recordAttempt(
      companyId,
      deliveryId,
      {
        number,
        attemptedAt,
        durationMs: outcome.durationMs,
        status: outcome.status ?? null,
        errorClass: outcome.errorClass ?? null,
      },
      { state, nextAttemptAt },
    );
    if (!recorded) return { state: "gone" };
    return { state: recorded.state, ...resultFields(outcome.status ?? null, outcome.errorClass ?? null) };
  }

  async #post(loaded: DeliveryToAttempt, attempt: number, at: Date): Promise<AttemptOutcome> {
    const secrets = signingSecrets(this.#sealer, loaded.endpoint, at);
    return this.#transport.post(signedWebhook(loaded.endpoint.url, { body: deliveryBody(loaded), deliveryId: loaded.delivery.id, attempt, secrets, at }));
  }
}

interface RecordedOutcome extends Omit<AttemptOutcome, "errorClass"> {
  readonly errorClass?: RecordedErrorClass;
}

function resultFields(status: number | null, errorClass: RecordedErrorClass | null): Pick<AttemptResult, "status" | "errorClass"> {
  return { ...(status !== null ? { status } : {}), ...(errorClass !== null ? { errorClass } : {}) };
}
