import type { LookupAddress, LookupOptions } from "node:dns";
import { request } from "node:https";
import { isIP } from "node:net";
import { performance } from "node:perf_hooks";
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
 * - the URL is checked against the target policy before every attempt, and
 *   the connection goes to an address that check returned: the socket's
 *   DNS lookup is replaced by one that answers only those addresses, so a
 *   name that resolves differently a moment later (rebinding) changes
 *   nothing;
 * - any 2xx within the timeout (10 s) succeeds; redirects are never
 *   followed (a 3xx is a failed attempt like any other status);
 * - the response body is never read: the outcome is known from the status
 *   line, and the response is destroyed at once, so nothing of it is kept;
 * - no connection reuse (`agent: false`): every attempt makes its own
 *   connection to its own checked address.
 */
export interface HttpsWebhookSenderOptions {
  readonly policy: WebhookTargetPolicy;
  /** Receiver timeout for the whole exchange up to the status line. Default 10,000 ms. */
  readonly timeoutMs?: number;
  /**
   * Extra trusted certificate authorities (PEM), replacing the system ones.
   * For tests with a self-signed receiver only; unset in production.
   */
  readonly trustedCaForTests?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export class HttpsWebhookSender implements WebhookTransport {
  readonly #policy: WebhookTargetPolicy;
  readonly #timeoutMs: number;
  readonly #ca: string | undefined;

  constructor(options: HttpsWebhookSenderOptions) {
    this.#policy = options.policy;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#ca = options.trustedCaForTests;
  }

  async post(webhook: OutgoingWebhook): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    const check = await this.#policy.check(webhook.url);
    if (!check.allowed) {
      const errorClass: AttemptErrorClass = check.problem === "unresolvable" ? "dns_error" : "host_not_allowed";
      return { ok: false, errorClass, durationMs: elapsed() };
    }
    const { url, hostname, port, addresses } = check.target;
    const body = Buffer.from(webhook.body, "utf8");

    return await new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: Omit<AttemptOutcome, "durationMs">) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...outcome, durationMs: elapsed() });
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
        finish({ ok: false, errorClass: "timeout" });
        req.destroy(new Error("webhook receiver timeout"));
      }, this.#timeoutMs);

      req.on("response", (response) => {
        const status = response.statusCode ?? 0;
        finish({ ok: isSuccessStatus(status), status });
        // Never read, never stored (spec, Delivery rules 6).
        response.destroy();
        req.destroy();
      });
      req.on("error", (error) => finish({ ok: false, errorClass: errorClassOf(error) }));
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

const TLS_CODES = /^(CERT_|ERR_TLS_|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_|HOSTNAME_MISMATCH|EPROTO)/;

function errorClassOf(error: unknown): AttemptErrorClass {
  // Racing several addresses (autoSelectFamily), Node reports every failure at once.
  const first = error instanceof AggregateError && error.errors.length > 0 ? (error.errors[0] as unknown) : error;
  const code = (first as { code?: unknown }).code ?? (error as { code?: unknown }).code;
  if (typeof code !== "string") return "network_error";
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ECONNRESET" || code === "EPIPE") return "connection_reset";
  if (code === "ETIMEDOUT") return "timeout";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "unreachable";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "dns_error";
  if (TLS_CODES.test(code)) return "tls_error";
  return "network_error";
}
