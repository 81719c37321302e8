/**
 * One HTTP attempt of a delivery, as the capability sees it: what to post,
 * and what came of it. The HTTPS adapter (src/adapters/http/webhook-sender.ts)
 * implements the port.
 */

/** A signed request, ready to post. */
export interface OutgoingWebhook {
  /** The endpoint URL as stored; checked against the target policy again before connecting. */
  readonly url: string;
  /** Every request header (Content-Type, User-Agent, signature, delivery, attempt). */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes that were signed. */
  readonly body: string;
}

/**
 * Why an attempt got no HTTP status. Recorded with the attempt; never the
 * response body (spec, Delivery rules 6).
 */
export type AttemptErrorClass =
  /** The URL or one of its host's addresses is not allowed (checked before every attempt). */
  | "host_not_allowed"
  /** The host name did not resolve. */
  | "dns_error"
  /** No 2xx (or any) status within the receiver timeout. */
  | "timeout"
  | "connection_refused"
  | "connection_reset"
  /** No route to the host or its network. */
  | "unreachable"
  /** The TLS handshake failed (certificate not trusted, wrong name, expired, ...). */
  | "tls_error"
  | "network_error";

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
