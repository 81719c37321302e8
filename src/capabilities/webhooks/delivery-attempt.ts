import { WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from "./brand.ts";
import { signatureHeader } from "./signing.ts";

/**
 * One HTTP attempt of a delivery, as the capability sees it: what to post,
 * and what came of it. The HTTPS adapter (src/adapters/http/webhook-sender.ts)
 * implements the port.
 */

/** What a delivery body says (spec: Delivery request). */
export interface WebhookBodyParts {
  /** The body's `id`: a delivery id, or an event id on a live stream. */
  readonly id: string;
  readonly event: string;
  readonly occurredAt: Date;
  readonly data: Readonly<Record<string, unknown>>;
}

/** The JSON body of a delivery, `{ id, event, occurredAt, data }`: the exact bytes that are signed. */
export function webhookBody(parts: WebhookBodyParts): string {
  return JSON.stringify({ id: parts.id, event: parts.event, occurredAt: parts.occurredAt.toISOString(), data: parts.data });
}

/** A signed request, ready to post. */
export interface OutgoingWebhook {
  /** The endpoint URL as stored; checked against the target policy again before connecting. */
  readonly url: string;
  /** Every request header (Content-Type, User-Agent, signature, delivery, attempt). */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes that were signed. */
  readonly body: string;
}

/** What a signed request carries besides the endpoint's URL. */
export interface SignedWebhookParts {
  /** The JSON body, signed as these exact bytes. */
  readonly body: string;
  /** The delivery id (the body's `id`). */
  readonly deliveryId: string;
  /** The attempt number, from 1. */
  readonly attempt: number;
  /** The endpoint's live secrets, newest first: one `v1` each. */
  readonly secrets: readonly string[];
  /** The signature's timestamp. */
  readonly at: Date;
}

/** A request with the spec's headers (Delivery request), signed at `at` with every live secret. */
export function signedWebhook(url: string, parts: SignedWebhookParts): OutgoingWebhook {
  return {
    url,
    body: parts.body,
    headers: {
      "content-type": "application/json",
      "user-agent": WEBHOOK_USER_AGENT,
      [WEBHOOK_HEADERS.signature]: signatureHeader(parts.body, parts.secrets, Math.floor(parts.at.getTime() / 1000)),
      [WEBHOOK_HEADERS.delivery]: parts.deliveryId,
      [WEBHOOK_HEADERS.attempt]: String(parts.attempt),
    },
  };
}

/**
 * Why an attempt got no HTTP status: two classes and nothing finer. A
 * finer class (refused, reset, TLS, DNS, host not allowed) would turn the
 * retry button into a scanner of the service's network and of DNS answers;
 * the detail goes to the server log under the delivery id.
 * Recorded with the attempt; never the response body (spec, Delivery rules 6).
 */
export type AttemptErrorClass =
  /** No status within the receiver budget (10 s for lookup, connection, TLS and answer). */
  | "timeout"
  /** Anything else that kept the request from being answered. */
  | "network";

/** An error class as recorded: the transport's, or no request at all because the endpoint is disabled. */
export type RecordedErrorClass = AttemptErrorClass | "endpoint_disabled";

export const ATTEMPT_ERROR_CLASSES: readonly AttemptErrorClass[] = ["timeout", "network"];

export interface AttemptOutcome {
  /** True only for a 2xx status within the timeout. */
  readonly ok: boolean;
  /** The HTTP status the receiver answered, when it answered. */
  readonly status?: number;
  /** Why there was no status. */
  readonly errorClass?: AttemptErrorClass;
  readonly durationMs: number;
}

/** Port: posts one attempt. Never throws for what the receiver does: failures are outcomes. */
export interface WebhookTransport {
  post(webhook: OutgoingWebhook): Promise<AttemptOutcome>;
}

export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}
