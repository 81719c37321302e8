import type { ServerResponse } from "node:http";
import Stripe from "stripe";
import type { HostResolver, ResolvedAddress } from "../../src/capabilities/webhooks/ssrf-policy.ts";
import type { WebhookDeliveryOptions } from "../../src/wiring/webhooks.ts";
import { type HttpsReceiver, makeTestCertificate, type ReceivedRequest, startHttpsReceiver, type TestCertificate } from "../adapters/http/https-receiver.ts";

/**
 * What the black-box webhook tests share: a real HTTPS receiver on
 * 127.0.0.1 whose answer is chosen per path, the delivery options that let
 * the service reach it (loopback allowed, the test certificate trusted, a
 * resolver for the test's host names, a short schedule, a movable clock),
 * and verification of what arrives with an independent verifier (the
 * `stripe` package's, the same `t=...,v1=...` scheme).
 */

/** The host name endpoints use; it resolves to 127.0.0.1 through the test resolver. */
export const HOOK_HOST = "hooks.e2e.example";
/** A name that resolves to a private address: refused on save even with loopback allowed. */
export const PRIVATE_HOST = "intranet-hooks.example";

/** 5 attempts like production, one second apart instead of minutes. */
export const SHORT_SCHEDULE = { maxAttempts: 5, waitsSeconds: [1, 1, 1, 1], deadLetterWaitSeconds: 600 } as const;

/** The capability's clock: real time plus `offsetMs` (a test moves it to let 24 hours pass). */
export interface TestClock {
  offsetMs: number;
  now(): Date;
}

export function testClock(): TestClock {
  const clock: TestClock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };
  return clock;
}

export function testResolver(names: Readonly<Record<string, string>> = {}): HostResolver {
  const table: Record<string, string> = { [HOOK_HOST]: "127.0.0.1", [PRIVATE_HOST]: "10.20.30.40", ...names };
  return {
    async resolve(hostname): Promise<readonly ResolvedAddress[]> {
      const address = table[hostname];
      if (!address) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      return [{ address, family: address.includes(":") ? 6 : 4 }];
    },
  };
}

export function loopbackDelivery(certificate: TestCertificate, clock?: TestClock): WebhookDeliveryOptions {
  return {
    resolver: testResolver(),
    allowLoopback: true,
    trustedCa: certificate.cert,
    schedule: SHORT_SCHEDULE,
    receiverTimeoutMs: 3_000,
    ...(clock ? { clock: () => clock.now() } : {}),
  };
}

/** How the receiver answers one path: a status and a body (the body must never be recorded). */
export interface Answer {
  readonly status: number;
  readonly body?: string;
}

/** An HTTPS receiver answering per path prefix (default 200). */
export interface RoutedReceiver {
  readonly receiver: HttpsReceiver;
  readonly certificate: TestCertificate;
  /** `https://hooks.e2e.example:<port><path>` */
  urlFor(path: string): string;
  answer(pathPrefix: string, answer: Answer): void;
  on(path: string): ReceivedRequest[];
  /** Waits until `count` requests reached `path` (or `match` holds). */
  waitOn(path: string, count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startRoutedReceiver(): Promise<RoutedReceiver> {
  const certificate = await makeTestCertificate([HOOK_HOST]);
  const receiver = await startHttpsReceiver(certificate);
  const answers = new Map<string, Answer>();
  receiver.handle((request, response: ServerResponse) => {
    let chosen: Answer = { status: 200 };
    for (const [prefix, answer] of answers) if (request.path.startsWith(prefix)) chosen = answer;
    response.writeHead(chosen.status, { "content-type": "text/plain" }).end(chosen.body ?? "");
  });
  const on = (path: string): ReceivedRequest[] => receiver.received.filter((r) => r.path === path);
  return {
    receiver,
    certificate,
    urlFor: (path) => `https://${HOOK_HOST}:${receiver.port}${path}`,
    answer: (prefix, answer) => void answers.set(prefix, answer),
    on,
    async waitOn(path, count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (on(path).length < count) {
        if (Date.now() > deadline) throw new Error(`${path} got ${on(path).length} requests, expected ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return on(path);
    },
    close: () => receiver.close(),
  };
}

const stripe = new Stripe("sk_test_not_used_no_network");

/** The delivery body as a receiver reads it. */
export interface DeliveryBody {
  id: string;
  event: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

/**
 * Verifies a received delivery with the stripe verifier (raw body, every
 * v1 value in constant time, five minutes of tolerance against the
 * receiver's clock `nowSeconds`) and answers the parsed body; throws when
 * the signature does not verify with `secret`.
 */
export function verifiedBody(request: ReceivedRequest, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): DeliveryBody {
  const header = request.headers["service-signature"];
  if (typeof header !== "string") throw new Error("no Service-Signature header");
  stripe.webhooks.constructEvent(request.body, header, secret, 300, undefined, nowSeconds);
  return JSON.parse(request.body) as DeliveryBody;
}

/** True when the stripe verifier accepts the delivery with `secret`. */
export function verifies(request: ReceivedRequest, secret: string, nowSeconds?: number): boolean {
  try {
    verifiedBody(request, secret, nowSeconds);
    return true;
  } catch {
    return false;
  }
}

/** The v1 values of a received signature header. */
export function signatures(request: ReceivedRequest): string[] {
  const header = String(request.headers["service-signature"] ?? "");
  return header
    .split(",")
    .filter((part) => part.startsWith("v1="))
    .map((part) => part.slice(3));
}

export async function waitUntil<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}
