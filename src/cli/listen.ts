/**
 * `mailctl listen` and `mailctl trigger`: a developer's commands, as
 * `stripe listen` and `stripe trigger` are. `listen` opens the company's
 * live event stream (WebhooksService.StreamEvents; the CLI pulls, the
 * service never connects to the developer's machine) and posts each event
 * to `--forward-to` exactly as a delivery is posted: the same body, the
 * same headers (Content-Type, User-Agent, Service-Signature,
 * Service-Delivery, Service-Attempt), the same 10-second budget, no
 * redirects followed. The signature is made here, with a secret of this
 * session (made at start, or `--secret`), printed at start for the local
 * receiver to verify with; the service never sees it. A stream that ends
 * (an hour passed, the service restarts, the feed was interrupted) or a
 * connection that is lost is opened again, with the same secret, until ^C.
 *
 * Who calls: an API key with `mail.admin` on the public port (`--api-key`
 * or MAIL_API_KEY; `--url` or MAIL_API_URL, default the local service), or
 * the operator token with `--company` on the operator listener (as every
 * other mailctl command).
 */
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { signedWebhook } from "../capabilities/webhooks/delivery-attempt.ts";
import { RECEIVER_TIMEOUT_MS } from "../capabilities/webhooks/delivery-rules.ts";
import { generateWebhookSecret, WEBHOOK_SECRET_PREFIX } from "../capabilities/webhooks/signing.ts";
import { messageToPublicJson } from "../contract/json-codec.ts";
import { type LiveEvent, StreamEndReason, WebhooksService } from "../gen/mail/v1/webhooks_pb.js";
import { COMPANY_HEADER } from "../transport/connect/session-cookie.ts";
import { UsageError } from "./usage.ts";

/** The public HTTP/1.1 listener of a service started with `npm start` (HTTP_PORT). */
export const DEFAULT_API_URL = "http://127.0.0.1:8080";
/** The operator listener (OPERATOR_HOST:OPERATOR_PORT). */
export const DEFAULT_OPERATOR_URL = "http://127.0.0.1:8082";

/** The options these commands read (mailctl's parsed command line). */
export interface DeveloperOptions {
  readonly company?: string | undefined;
  readonly "api-key"?: string | undefined;
  readonly url?: string | undefined;
  readonly "forward-to"?: string | undefined;
  readonly events?: string | undefined;
  readonly secret?: string | undefined;
  readonly endpoints?: boolean | undefined;
}

/** Where the commands write (the process's streams; tests read them through a child process). */
interface Output {
  line(text: string): void;
}

const stdout: Output = { line: (text) => process.stdout.write(`${text}\n`) };

/** The WebhooksService as the caller may reach it: an API key on the public port, or the operator for `--company`. */
function webhooksClient(options: DeveloperOptions, env: NodeJS.ProcessEnv): Client<typeof WebhooksService> {
  const bearer = (token: string): Interceptor => (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  const company = options.company;
  if (company) {
    const token = env.OPERATOR_TOKEN;
    if (!token) throw new UsageError("--company acts as the operator: set OPERATOR_TOKEN (or leave --company out and use an API key)");
    const forCompany: Interceptor = (next) => (req) => {
      req.header.set(COMPANY_HEADER, company);
      return next(req);
    };
    const baseUrl = env.MAIL_ADMIN_URL ?? DEFAULT_OPERATOR_URL;
    return createClient(WebhooksService, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [bearer(token), forCompany] }));
  }
  const apiKey = options["api-key"] ?? env.MAIL_API_KEY;
  if (!apiKey) throw new UsageError("pass an API key with the scope mail.admin (--api-key, or MAIL_API_KEY), or --company with OPERATOR_TOKEN");
  const baseUrl = options.url ?? env.MAIL_API_URL ?? DEFAULT_API_URL;
  return createClient(WebhooksService, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [bearer(apiKey)] }));
}

/** `mailctl trigger <event> [--endpoints]`: a test event into the company's streams (and endpoints). */
export async function trigger(event: string, options: DeveloperOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const response = await webhooksClient(options, env).triggerWebhookEvent({ event, endpoints: options.endpoints === true });
  stdout.line(JSON.stringify(messageToPublicJson(WebhooksService.method.triggerWebhookEvent.output, response), null, 2));
}

/** The longest pause between two attempts to open the stream again. */
const LONGEST_RETRY_MS = 30_000;
/** Silence (in keep-alive intervals) after which the connection is taken for dead. */
const SILENT_INTERVALS = 3;

/** Refusals that opening the stream again cannot change. */
const FATAL_CODES: ReadonlySet<Code> = new Set([Code.Unauthenticated, Code.PermissionDenied, Code.InvalidArgument, Code.NotFound, Code.ResourceExhausted]);

/** `mailctl listen --forward-to URL [--events a,b] [--secret whsec_...]`: until ^C (or a refusal, thrown). */
export async function listen(options: DeveloperOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const forwardTo = forwardUrl(options["forward-to"]);
  const events = (options.events ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "");
  const secret = options.secret ?? generateWebhookSecret();
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX) || secret.length < WEBHOOK_SECRET_PREFIX.length + 32) {
    throw new UsageError(`--secret must be a webhook secret (${WEBHOOK_SECRET_PREFIX} and at least 32 more characters), such as one listen printed`);
  }
  const client = webhooksClient(options, env);

  const stopping = new AbortController();
  const stop = () => stopping.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  let ready = false;
  let failures = 0;
  try {
    while (!stopping.signal.aborted) {
      const call = new AbortController();
      const onStop = () => call.abort();
      stopping.signal.addEventListener("abort", onStop, { once: true });
      const watchdog = new Watchdog(() => call.abort());
      let ended: StreamEndReason | undefined;
      try {
        for await (const message of client.streamEvents({ events }, { signal: call.signal })) {
          watchdog.heard();
          const kind = message.kind;
          if (kind.case === "ready") {
            failures = 0;
            watchdog.expect(kind.value.keepAliveSeconds * 1000 * SILENT_INTERVALS);
            stdout.line(ready ? `${now()}  Reconnected.` : readyLines(events.length === 0 ? [] : kind.value.events, forwardTo, secret));
            ready = true;
          } else if (kind.case === "event") {
            stdout.line(`${now()}   --> ${kind.value.event} [${kind.value.id}]`);
            stdout.line(`${now()}  <-- ${await forward(forwardTo, kind.value, secret)} POST ${forwardTo} [${kind.value.id}]`);
          } else if (kind.case === "end") {
            ended = kind.value.reason;
          }
        }
        if (stopping.signal.aborted) break;
        stdout.line(`${now()}  ${endLine(ended)}`);
        // A stream that ran its hour or was interrupted is opened again at once; a restarting service is given time.
        if (ended === StreamEndReason.MAX_DURATION || ended === StreamEndReason.INTERRUPTED) continue;
      } catch (error) {
        if (stopping.signal.aborted) break;
        const connectError = ConnectError.from(error);
        if (FATAL_CODES.has(connectError.code)) throw error;
        stdout.line(`${now()}  Lost the connection to the service (${connectError.rawMessage || Code[connectError.code]}).`);
      } finally {
        watchdog.stop();
        stopping.signal.removeEventListener("abort", onStop);
      }
      const waitMs = Math.min(LONGEST_RETRY_MS, 1000 * 2 ** failures++);
      stdout.line(`${now()}  Opening the stream again in ${Math.round(waitMs / 1000)} s.`);
      await pause(waitMs, stopping.signal);
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

function readyLines(events: readonly string[], forwardTo: string, secret: string): string {
  return [
    `${now()}  Ready! Forwarding ${events.length === 0 ? "every event" : events.join(", ")} to ${forwardTo}`,
    `Your webhook signing secret is ${secret} (^C to quit)`,
  ].join("\n");
}

function endLine(reason: StreamEndReason | undefined): string {
  switch (reason) {
    case StreamEndReason.MAX_DURATION:
      return "The stream reached its longest duration.";
    case StreamEndReason.SHUTDOWN:
      return "The service is shutting down; it closed the stream.";
    case StreamEndReason.INTERRUPTED:
      return "The service interrupted the stream; events may have been missed.";
    default:
      return "The stream closed.";
  }
}

function forwardUrl(value: string | undefined): string {
  if (!value) throw new UsageError("--forward-to is required: the local URL to post events to, e.g. http://localhost:3000/hooks");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--forward-to is not a URL: ${value}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError("--forward-to takes an http:// or https:// URL");
  return url.href;
}

/**
 * Posts one event as a delivery is posted: the body as the service wrote
 * it, signed now with the session's secret, attempt 1, within the receiver
 * budget, redirects not followed. Answers the status (`[200]`) or why there
 * was none (`[timeout]`, `[network: ...]`).
 */
async function forward(url: string, event: LiveEvent, secret: string): Promise<string> {
  const request = signedWebhook(url, { body: event.body, deliveryId: event.id, attempt: 1, secrets: [secret], at: new Date() });
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(RECEIVER_TIMEOUT_MS),
    });
    // Only the status matters, as for a delivery; the body is read and dropped so the connection is reused.
    await response.arrayBuffer().catch(() => undefined);
    return `[${response.status}]`;
  } catch (error) {
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return "[timeout]";
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return `[network: ${cause}]`;
  }
}

/** Calls `dead` when nothing was heard for the expected time (armed by the first `ready`). */
class Watchdog {
  readonly #dead: () => void;
  #timer: NodeJS.Timeout | undefined;
  #ms = 0;

  constructor(dead: () => void) {
    this.#dead = dead;
  }

  expect(ms: number): void {
    this.#ms = ms;
    this.heard();
  }

  heard(): void {
    if (this.#ms <= 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#dead, this.#ms);
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function now(): string {
  return new Date().toISOString().replace("T", " ").slice(0, 19);
}
