import type { LookupAddress, LookupOptions } from "node:dns";
import { request } from "node:https";
import { isIP } from "node:net";
import { performance } from "node:perf_hooks";
import { WEBHOOK_HEADERS } from "../../capabilities/webhooks/brand.ts";
import {
  type AttemptErrorClass,
  type AttemptOutcome,
  isSuccessStatus,
  type OutgoingWebhook,
  type WebhookTransport,
} from "../../capabilities/webhooks/delivery-attempt.ts";
import type { ResolvedAddress, WebhookTargetPolicy } from "../../capabilities/webhooks/ssrf-policy.ts";

/**
 * Posts webhook deliveries over HTTPS (spec, Delivery rules):
 *
 * - one budget (10 s) for the whole attempt: the DNS lookup of the URL
 *   check, the connection, the TLS handshake and the status line; the
 *   timer starts before the lookup;
 * - the URL is checked against the target policy before every attempt, and
 *   the connection goes to an address that check returned: the socket's
 *   DNS lookup is replaced by one that answers only those addresses, so a
 *   name that resolves differently a moment later (rebinding) changes
 *   nothing;
 * - any 2xx within the budget succeeds; redirects are never followed (a
 *   3xx is a failed attempt like any other status);
 * - the response body is never read: the outcome is known from the status
 *   line, and the response is destroyed at once, so nothing of it is kept;
 * - an attempt without a status is `timeout` or `network`, nothing finer;
 *   the detail (error code, refused address) goes to the log with the
 *   delivery id and attempt number;
 * - no connection reuse (`agent: false`): every attempt makes its own
 *   connection to its own checked address.
 */
export interface HttpsWebhookSenderOptions {
  readonly policy: WebhookTargetPolicy;
  /** Receiver budget for the whole attempt, lookup included. Default 10,000 ms. */
  readonly timeoutMs?: number;
  /**
   * The certificate authorities (PEM) a receiver's certificate must chain
   * to, replacing Node's bundled list: receivers under a private PKI (or a
   * test's self-signed receiver). Default: Node's bundled list.
   */
  readonly trustedCa?: string;
  /** Where the detail of a failed attempt goes (never into the attempt record). */
  readonly log?: { warn(details: Record<string, unknown>, message: string): void };
}

const DEFAULT_TIMEOUT_MS = 10_000;

export class HttpsWebhookSender implements WebhookTransport {
  readonly #policy: WebhookTargetPolicy;
  readonly #timeoutMs: number;
  readonly #ca: string | undefined;
  readonly #log: HttpsWebhookSenderOptions["log"];

  constructor(options: HttpsWebhookSenderOptions) {
    this.#policy = options.policy;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#ca = options.trustedCa;
    this.#log = options.log;
  }

  async post(webhook: OutgoingWebhook): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (errorClass: AttemptErrorClass, detail: string): AttemptOutcome => {
      this.#log?.warn(
        {
          deliveryId: webhook.headers[WEBHOOK_HEADERS.delivery],
          attempt: webhook.headers[WEBHOOK_HEADERS.attempt],
          errorClass,
          detail,
        },
        "webhook attempt got no status",
      );
      return { ok: false, errorClass, durationMs: elapsed() };
    };

    const check = await this.#policy.check(webhook.url, this.#timeoutMs);
    if (!check.allowed) return failed(check.problem === "resolve_timeout" ? "timeout" : "network", `${check.problem}: ${check.reason}`);
    const remainingMs = this.#timeoutMs - (performance.now() - started);
    if (remainingMs <= 0) return failed("timeout", "the lookup used the whole budget");
    const { url, hostname, port, addresses } = check.target;
    const body = Buffer.from(webhook.body, "utf8");

    return await new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: AttemptOutcome | (() => AttemptOutcome)) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(typeof outcome === "function" ? outcome() : outcome);
      };

      const req = request({
        method: "POST",
        hostname,
        port,
        path: `${url.pathname}${url.search}`,
        headers: { ...webhook.headers, "content-length": String(body.length) },
        // SNI carries names only, never addresses.
        ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
        lookup: pinnedLookup(addresses),
        agent: false,
        ...(this.#ca !== undefined ? { ca: this.#ca } : {}),
      });

      const timer = setTimeout(() => {
        finish(() => failed("timeout", `no status within ${this.#timeoutMs} ms`));
        req.destroy(new Error("webhook receiver timeout"));
      }, remainingMs);

      req.on("response", (response) => {
        const status = response.statusCode ?? 0;
        finish({ ok: isSuccessStatus(status), status, durationMs: elapsed() });
        // Never read, never stored (spec, Delivery rules 6).
        response.destroy();
        req.destroy();
      });
      req.on("error", (error) => finish(() => failed(errorClassOf(error), errorDetail(error))));
      req.end(body);
    });
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the socket that answers only the addresses the policy
 * checked. Node asks with `all: true` when it races IPv4 and IPv6
 * (autoSelectFamily), and for one address otherwise.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]) {
  return (_hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (wanted.length === 0) {
      const error: NodeJS.ErrnoException = new Error("no checked address of the requested family");
      error.code = "ENOTFOUND";
      callback(error, "", undefined);
      return;
    }
    if (options.all) {
      callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
      return;
    }
    const first = wanted[0] as ResolvedAddress;
    callback(null, first.address, first.family);
  };
}

function firstError(error: unknown): unknown {
  // Racing several addresses (autoSelectFamily), Node reports every failure at once.
  return error instanceof AggregateError && error.errors.length > 0 ? (error.errors[0] as unknown) : error;
}

/** `timeout` for a connection that timed out on its own, `network` for everything else. */
function errorClassOf(error: unknown): AttemptErrorClass {
  const code = (firstError(error) as { code?: unknown }).code ?? (error as { code?: unknown }).code;
  return code === "ETIMEDOUT" ? "timeout" : "network";
}

/** For the log only. */
function errorDetail(error: unknown): string {
  const first = firstError(error);
  const code = (first as { code?: unknown }).code;
  const message = first instanceof Error ? first.message : String(first);
  return typeof code === "string" ? `${code}: ${message}` : message;
}
