import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { type CallOptions, type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { toMailApiError } from "./errors.js";
import { AuditService } from "./gen/mail/v1/audit_pb.js";
import { CampaignsService } from "./gen/mail/v1/campaigns_pb.js";
import { CreditsService } from "./gen/mail/v1/credits_pb.js";
import { DomainsService, SendersService } from "./gen/mail/v1/domains_pb.js";
import { SignupFormsService } from "./gen/mail/v1/forms_pb.js";
import { IntegrationsService } from "./gen/mail/v1/integrations_pb.js";
import { ListsService } from "./gen/mail/v1/lists_pb.js";
import { MailService } from "./gen/mail/v1/mail_pb.js";
import { ReportsService } from "./gen/mail/v1/reports_pb.js";
import { SendingStatusService } from "./gen/mail/v1/sending_status_pb.js";
import { StatsService } from "./gen/mail/v1/stats_pb.js";
import { SuppressionsService } from "./gen/mail/v1/suppressions_pb.js";
import { TemplatesService } from "./gen/mail/v1/templates_pb.js";
import { WebhooksService } from "./gen/mail/v1/webhooks_pb.js";
import { DEFAULT_RETRY, NO_RETRY, type RetryOptions, retryDelay, sleep } from "./retry.js";

/**
 * The services an API key may call, each under its client's property. The
 * contract's other services refuse API keys (ApiKeysService, MembersService,
 * MessageContentService: `refuse_api_keys`), are for operators
 * (AdminService, EventsService, DeliveryReportsService: `operator_only`) or
 * for signed-in members (SessionService), so they are not here.
 */
export const COMPANY_SERVICES = {
  mail: MailService,
  webhooks: WebhooksService,
  lists: ListsService,
  signupForms: SignupFormsService,
  templates: TemplatesService,
  reports: ReportsService,
  suppressions: SuppressionsService,
  credits: CreditsService,
  domains: DomainsService,
  senders: SendersService,
  stats: StatsService,
  campaigns: CampaignsService,
  sendingStatus: SendingStatusService,
  integrations: IntegrationsService,
  audit: AuditService,
} as const;

export type CompanyServices = typeof COMPANY_SERVICES;

/** One typed client per company service: `client.mail.sendMessage(...)`. */
export type MailClient = { readonly [K in keyof CompanyServices]: Client<CompanyServices[K]> };

export interface MailClientOptions {
  /** The API key. Keys belong on servers only, never in web pages or mobile apps. */
  readonly apiKey: string;
  /** The API's base URL, e.g. `https://mail.example.com` (its HTTP listener, where the JSON API also is). */
  readonly baseUrl: string;
  /** Retries of 429 and 5xx answers; `false` for none. Defaults: DEFAULT_RETRY. */
  readonly retry?: Partial<RetryOptions> | false;
  /** Timeout of each attempt, in ms (a call's own `timeoutMs` wins). Default: none. */
  readonly timeoutMs?: number;
  /** The fetch to use (a proxy agent, instrumentation). Default: globalThis.fetch. */
  readonly fetch?: typeof globalThis.fetch;
  /** Connect interceptors, run on every attempt. */
  readonly interceptors?: Interceptor[];
  /** JSON instead of binary protobuf on the wire (easier to read in a proxy). Default false. */
  readonly useJson?: boolean;
  /**
   * The client refuses to start in a web page: an API key there is readable
   * by anyone who opens it. Set only for a page that never holds a real key
   * (a local demo against a test service).
   */
  readonly dangerouslyAllowBrowser?: boolean;
}

/** The header that carries a call's idempotency key (the spec's `Idempotency-Key`). */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

/**
 * A client of every company service of the mail API, over the Connect
 * protocol on fetch (Node 20+, Deno, Bun, edge workers).
 *
 * Every unary call is retried on 429 and 5xx as the spec's retry guidance
 * says (`retry-after` when present, else increasing delays with jitter,
 * bounded in attempts and time). Every call that changes something carries
 * an idempotency key, the same on every retry: the caller's (an
 * `idempotencyKey` field, as on a send, or the `Idempotency-Key` header in
 * the call's `headers`), else a random UUID, so a retried send never sends
 * twice. Errors are MailApiError, with the API's `code`.
 */
export function createMailClient(options: MailClientOptions): MailClient {
  if (!options.apiKey) throw new TypeError("createMailClient: apiKey is required");
  if (!options.baseUrl) throw new TypeError("createMailClient: baseUrl is required");
  if (inBrowser() && !options.dangerouslyAllowBrowser) {
    throw new Error(
      "createMailClient: API keys belong on servers only, never in web pages (anyone can read them there); call the mail API from your server",
    );
  }
  const authorization: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${options.apiKey}`);
    return next(req);
  };
  const transport = createConnectTransport({
    baseUrl: options.baseUrl,
    useBinaryFormat: !options.useJson,
    interceptors: [authorization, ...(options.interceptors ?? [])],
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { defaultTimeoutMs: options.timeoutMs } : {}),
  });
  const retry = options.retry === false ? NO_RETRY : { ...DEFAULT_RETRY, ...options.retry };
  const client = Object.fromEntries(
    Object.entries(COMPANY_SERVICES).map(([name, service]) => [name, serviceClient(service, transport, retry)]),
  );
  return client as unknown as MailClient;
}

/** A web page (a document): Node, Deno, Bun and edge workers have none. */
function inBrowser(): boolean {
  return typeof (globalThis as { document?: unknown }).document !== "undefined";
}

/** A request as the caller wrote it: a message, or an object of its fields. */
type Request = object;
type UnaryFn = (request: Request, options?: CallOptions) => Promise<unknown>;
type StreamingFn = (request: Request, options?: CallOptions) => AsyncIterable<unknown>;

function serviceClient(service: DescService, transport: Transport, retry: RetryOptions): Record<string, unknown> {
  const plain = createClient(service, transport) as unknown as Record<string, UnaryFn & StreamingFn>;
  const methods: Record<string, unknown> = {};
  for (const method of service.methods) {
    const call = plain[method.localName];
    if (!call) continue;
    if (method.methodKind === "unary") methods[method.localName] = unaryCall(method, call, retry);
    else if (method.methodKind === "server_streaming") methods[method.localName] = streamingCall(call);
    // Client and bidi streaming need HTTP/2 end to end; fetch cannot send them, and the contract has none for keys.
  }
  return methods;
}

function unaryCall(method: DescMethod, call: UnaryFn, retry: RetryOptions): UnaryFn {
  const procedure = `${method.parent.typeName}/${method.name}`;
  const readsOnly = method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS;
  return async (request, callOptions = {}) => {
    const headers = new Headers(callOptions.headers);
    const idempotencyKey = readsOnly ? undefined : ensureIdempotencyKey(method, request, headers);
    const options: CallOptions = { ...callOptions, headers };
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await call(request, options);
      } catch (thrown) {
        const error = toMailApiError(thrown, { attempts: attempt, ...(idempotencyKey ? { idempotencyKey } : {}) });
        if (callOptions.signal?.aborted) throw error;
        const delayMs = retryDelay(error, attempt, Date.now() - started, retry);
        if (delayMs === undefined) throw error;
        retry.onRetry?.({ procedure, attempt, delayMs, error, idempotencyKey });
        try {
          await sleep(delayMs, callOptions.signal);
        } catch (_aborted) {
          throw error;
        }
      }
    }
  };
}

/**
 * The call's idempotency key: the request's own `idempotency_key` field
 * (a send's key names the message), else the `Idempotency-Key` header the
 * caller set, else a new random one in that header. The same `headers`
 * object goes out on every attempt, so every retry carries the same key.
 */
function ensureIdempotencyKey(method: DescMethod, request: Request, headers: Headers): string {
  const bodyField = method.input.fields.find((f) => f.name === "idempotency_key" && f.fieldKind === "scalar");
  const bodyKey = bodyField ? (request as Record<string, unknown>)[bodyField.localName] : undefined;
  if (typeof bodyKey === "string" && bodyKey !== "") return bodyKey;
  const given = headers.get(IDEMPOTENCY_KEY_HEADER);
  if (given) return given;
  const generated = crypto.randomUUID();
  headers.set(IDEMPOTENCY_KEY_HEADER, generated);
  return generated;
}

/** Server-streaming calls are not retried (a retry would repeat what was already read); their errors are MailApiError. */
function streamingCall(call: StreamingFn): StreamingFn {
  return async function* (request, callOptions) {
    try {
      yield* call(request, callOptions);
    } catch (thrown) {
      throw toMailApiError(thrown);
    }
  };
}
