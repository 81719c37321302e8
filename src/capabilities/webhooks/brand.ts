/**
 * The service's name as it appears on the wire of webhook deliveries. The
 * spec writes header names "with a neutral word in place of the service's
 * brand"; that word is `Service`, and it is kept here, once, so a rebrand
 * is a one-line change (receivers would have to follow: it is part of the
 * contract they verify).
 */
export const WEBHOOK_BRAND = "Service";

/** Request headers of a delivery (spec: Delivery request). */
export const WEBHOOK_HEADERS = {
  /** `t=<unix seconds>,v1=<hex HMAC-SHA256>` (two v1 values during rotation). */
  signature: `${WEBHOOK_BRAND}-Signature`,
  /** The delivery id (UUID), equal to the body's `id`, unchanged on retries. */
  delivery: `${WEBHOOK_BRAND}-Delivery`,
  /** Attempt number, from 1. */
  attempt: `${WEBHOOK_BRAND}-Attempt`,
} as const;

/** The User-Agent of deliveries; `1.0` is the webhook version (spec: Versioning). */
export const WEBHOOK_USER_AGENT = `${WEBHOOK_BRAND}-Mail-Webhooks/1.0`;
