import type { Server as HttpServer } from "node:http";
import type { Http2Server, Http2Session } from "node:http2";
import type { AddressInfo, Server } from "node:net";
import type { ServiceImpl, Interceptor, ConnectRouter } from "@connectrpc/connect";
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import Fastify, { type FastifyHttp2Options, type FastifyInstance, type FastifyServerOptions } from "fastify";
import { ApiError } from "../contract/api-error.ts";
import type { Config } from "../config.ts";
import type { ApiKeyAuthenticator } from "../capabilities/accounts/types.ts";
import type { RateLimiter } from "../capabilities/rate-limit/types.ts";
import type { IdempotencyGuard } from "../capabilities/idempotency/index.ts";
import { AdminService } from "../gen/mail/v1/admin_pb.js";
import { MailService } from "../gen/mail/v1/mail_pb.js";
import { WebhooksService } from "../gen/mail/v1/webhooks_pb.js";
import { ListsService } from "../gen/mail/v1/lists_pb.js";
import { IntegrationsService } from "../gen/mail/v1/integrations_pb.js";
import { SignupFormsService } from "../gen/mail/v1/forms_pb.js";
import { ReportsService } from "../gen/mail/v1/reports_pb.js";
import { TemplatesService } from "../gen/mail/v1/templates_pb.js";
import { SuppressionsService } from "../gen/mail/v1/suppressions_pb.js";
import { CampaignsService } from "../gen/mail/v1/campaigns_pb.js";
import { CreditsService } from "../gen/mail/v1/credits_pb.js";
import { SendingStatusService } from "../gen/mail/v1/sending_status_pb.js";
import { DomainsService, SendersService } from "../gen/mail/v1/domains_pb.js";
import { StatsService } from "../gen/mail/v1/stats_pb.js";
import { type HostedFormsDependencies, registerHostedForms } from "./http/hosted-forms/index.ts";
import { registerSesNotifications, type SesNotificationsDependencies } from "./http/ses-notifications.ts";
import { registerTrackingRoutes, type TrackingRoutesDependencies } from "./http/tracking-routes.ts";
import { EventsService } from "../gen/mail/v1/events_pb.js";
import { DeliveryReportsService } from "../gen/mail/v1/delivery_reports_pb.js";
import { SessionService } from "../gen/mail/v1/sessions_pb.js";
import { MembersService } from "../gen/mail/v1/members_pb.js";
import { ApiKeysService } from "../gen/mail/v1/api_keys_pb.js";
import { AuditService } from "../gen/mail/v1/audit_pb.js";
import { MessageContentService } from "../gen/mail/v1/message_content_pb.js";
import {
  type Authorize,
  authInterceptor,
  type CompanyLookup,
  createAuthorizer,
  type SessionAuthenticator,
} from "./connect/auth-interceptor.ts";
import { errorsInterceptor } from "./connect/errors-interceptor.ts";
import { unaryGrpcFastPath } from "./connect/unary-grpc-fast-path.ts";
import { FailedAuthentications } from "./http/failed-authentications.ts";
import { withIdempotency } from "./connect/idempotency-interceptor.ts";
import { contractValidationInterceptor } from "./connect/contract-validation-interceptor.ts";
import { wireValuesInterceptor } from "./connect/wire-values-interceptor.ts";
import { type MailServiceDeps, mailServiceImpl } from "./connect/mail/index.ts";
import { sendApiError } from "./http/error-reply.ts";
import { clientErrorHandler, frameworkErrors } from "./http/framework-errors.ts";
import {
  connectionsCheckingInterval,
  DEFAULT_LISTENER_TIMEOUTS,
  http2RequestDeadline,
  type ListenerTimeouts,
} from "./http/listener-timeouts.ts";
import { connectJsonOptions, utf8JsonBodies } from "./http/json-body.ts";
import { redactedRequest } from "./http/log-redaction.ts";
import { refuseUndecodableRequests } from "./http/undecodable-requests.ts";
import { coalescedStdout } from "./http/coalesced-stdout.ts";
import { addResponseHeaders, requestIdFor } from "./http/request-context.ts";
import { toApiError } from "./http/to-api-error.ts";
import { healthRoutes, type Readiness } from "./http/health.ts";
import type { Metrics } from "./metrics/registry.ts";
import { grpcHealth } from "./operator/grpc-health.ts";
import { grpcReflection, OPEN_SERVICE_NAMES } from "./operator/grpc-reflection.ts";
import { dualProtocolServer, type OperatorTls } from "./operator/one-port.ts";
import { openApiRoute } from "./openapi/route.ts";
import { type AdminScreenOptions, registerAdminScreen } from "./http/admin-screen.ts";
import { restBridge } from "./rest/bridge.ts";
import { bodyLimitOf, serveWithBodyLimits } from "./http/body-limits.ts";
import { createDirectTransport } from "./rest/direct-transport.ts";

/**
 * One contract, many doors. Two listeners are built from the same routes,
 * because Node cannot serve cleartext HTTP/2 and HTTP/1.1 on one socket:
 *
 * - HTTP/1.1 (HTTP_PORT, default 8080): the JSON /mail/v1 routes, Connect,
 *   gRPC-Web and the OpenAPI document;
 * - h2c (GRPC_PORT, default 8081): gRPC, Connect and the same JSON routes.
 *
 * Both also answer GET /livez and /readyz, and grpc.health.v1.Health/Check.
 * The operator's services (AdminService, EventsService) and GET /metrics are
 * on a third listener only (OPERATOR_HOST:OPERATOR_PORT, default
 * 127.0.0.1:8082), HTTP/1.1 and h2c on one port, never on the public ones.
 */
export interface ApiDependencies {
  readonly config: Config;
  readonly authenticator: ApiKeyAuthenticator;
  readonly rateLimiter: RateLimiter;
  /** Idempotency-Key handling of the POST operations (replays never reach a handler). */
  readonly idempotency: IdempotencyGuard;
  readonly adminService: ServiceImpl<typeof AdminService>;
  /** What the MailService handlers call (the configuration is added here). */
  readonly mail: Omit<MailServiceDeps, "config">;
  /** Webhook endpoints and deliveries, for the company's Mail administrators (scope mail.admin). */
  readonly webhooksService: ServiceImpl<typeof WebhooksService>;
  /** Contact lists, for the company's Mail administrators (scope mail.admin). */
  readonly listsService: ServiceImpl<typeof ListsService>;
  /** The store endpoints of the WordPress / WooCommerce plugin (scope mail.integrations.write). */
  readonly integrationsService?: ServiceImpl<typeof IntegrationsService>;
  /** Sign-up forms, created and deactivated by the company's Mail administrators (scope mail.admin). Not served when absent. */
  readonly signupFormsService?: ServiceImpl<typeof SignupFormsService>;
  /** Reports (revenue per campaign) for the company's Mail administrators (scope mail.admin). Not served when absent. */
  readonly reportsService?: ServiceImpl<typeof ReportsService>;
  /** The company's templates (mail.admin). Not served when absent. */
  readonly templatesService?: ServiceImpl<typeof TemplatesService>;
  /** The company's suppression list (members read, mail.admin changes). Not served when absent. */
  readonly suppressionsService?: ServiceImpl<typeof SuppressionsService>;
  /** The company's campaigns (members read, mail.admin changes). Not served when absent. */
  readonly campaignsService?: ServiceImpl<typeof CampaignsService>;
  /** The company's balance and credit ledger (mail.events.read). Not served when absent. */
  readonly creditsService?: ServiceImpl<typeof CreditsService>;
  /** Whether the company may send, and why not: the deliverability guard (mail.events.read). Not served when absent. */
  readonly sendingStatusService?: ServiceImpl<typeof SendingStatusService>;
  /** The company's sending domains (members read, mail.admin changes). Not served when absent. */
  readonly domainsService?: ServiceImpl<typeof DomainsService>;
  /** The company's sender addresses (members read, mail.admin changes). Not served when absent. */
  readonly sendersService?: ServiceImpl<typeof SendersService>;
  readonly statsService?: ServiceImpl<typeof StatsService>;
  /** The hosted sign-up pages (GET/POST /mail/v1/forms/{publicId}), on the public HTTP listeners. */
  readonly hostedForms?: HostedFormsDependencies;
  /** Campaign tracking and unsubscribe (/t/c, /t/o, /u; no API key), on the public HTTP listeners. Not served when absent. */
  readonly tracking?: TrackingRoutesDependencies;
  /** POST /mail/v1/providers/ses/notifications (SNS-signed, no API key), on the public HTTP listeners. Not served when absent. */
  readonly sesNotifications?: SesNotificationsDependencies;
  /** Internal services publish campaign and order events (operator token; gRPC/Connect only). Not served when absent. */
  readonly eventsService?: ServiceImpl<typeof EventsService>;
  /** Delivery reports that changed no status, for operators (operator token; gRPC/Connect only). Not served when absent. */
  readonly deliveryReportsService?: ServiceImpl<typeof DeliveryReportsService>;
  /**
   * Company members, sign-in and the audit log: the session door
   * (SessionService, Connect from the browser only), MembersService,
   * ApiKeysService, AuditService; the session lookup behind the cookie and
   * the company lookup of operators acting for a company. Not served when absent.
   */
  readonly people?: PeopleDependencies;
  /**
   * Recognises contract errors among unexpected ones: a saturated or
   * restarting database answers 503 SERVICE_UNAVAILABLE with retry-after
   * instead of 500 (the composition root knows the database's errors).
   */
  readonly classifyUnexpected?: (error: unknown) => ApiError | undefined;
  /** Pino options or false; tests pass { level: "warn" }. Request URLs are logged redacted either way. */
  readonly logger?: FastifyServerOptions["logger"];
  /** How long the listeners wait for clients (tests shorten them); DEFAULT_LISTENER_TIMEOUTS otherwise. */
  readonly timeouts?: Partial<ListenerTimeouts>;
  /** What GET /readyz and Health/Check ask (PostgreSQL, Temporal); always ready when absent. */
  readonly readiness?: Readiness;
  /** Request and RPC metrics, served on the operator listener's GET /metrics; none when absent. */
  readonly metrics?: Metrics;
  /** The content of messages as sent, for member sessions and operators (the screen's message preview). Not served when absent. */
  readonly messageContentService?: ServiceImpl<typeof MessageContentService>;
  /** The administration screen under /admin/ on the public HTTP listeners (src/transport/http/admin-screen.ts); false: not served. */
  readonly adminScreen?: AdminScreenOptions | false;
  /** TLS of the operator listener (OPERATOR_TLS_CERT_PATH / _KEY_PATH, read by the wiring); plain when absent. */
  readonly operatorTls?: OperatorTls;
}

export interface PeopleDependencies {
  readonly sessionService: ServiceImpl<typeof SessionService>;
  readonly membersService: ServiceImpl<typeof MembersService>;
  readonly apiKeysService: ServiceImpl<typeof ApiKeysService>;
  readonly auditService: ServiceImpl<typeof AuditService>;
  readonly sessions: SessionAuthenticator;
  readonly companies: CompanyLookup;
  /** Origins a session call may come from besides the request's own Host (PUBLIC_BASE_URL's). */
  readonly allowedOrigins: readonly string[];
}

export interface ApiServers {
  readonly http: FastifyInstance;
  readonly h2c: FastifyInstance;
  /** The operator listener's two protocols (one port). */
  readonly operatorHttp: FastifyInstance;
  readonly operatorH2c: FastifyInstance;
  /** Listens on the configured ports (0 picks free ones); resolves the bound URLs. */
  listen(): Promise<{ httpUrl: string; grpcUrl: string; operatorUrl: string }>;
  close(): Promise<void>;
}

type Listener = "public" | "operator";

function routesFor(deps: ApiDependencies, listener: Listener): (router: ConnectRouter) => void {
  const mail = mailServiceImpl({ ...deps.mail, config: deps.config });
  return (router) => {
    grpcHealth(router, deps.readiness ?? (async () => ({ ready: true, checks: {} })));
    // Describes whatever this listener's router serves (read at each request).
    grpcReflection(router);
    if (listener === "operator") {
      router.service(AdminService, deps.adminService);
      if (deps.eventsService) router.service(EventsService, deps.eventsService);
      if (deps.deliveryReportsService) router.service(DeliveryReportsService, deps.deliveryReportsService);
      // Operators act for a company (x-mail-company-id) through the company services.
      if (deps.people) {
        router.service(MembersService, deps.people.membersService);
        router.service(ApiKeysService, deps.people.apiKeysService);
        router.service(AuditService, deps.people.auditService);
        router.service(WebhooksService, deps.webhooksService);
        router.service(ListsService, deps.listsService);
        if (deps.signupFormsService) router.service(SignupFormsService, deps.signupFormsService);
        if (deps.reportsService) router.service(ReportsService, deps.reportsService);
        if (deps.templatesService) router.service(TemplatesService, deps.templatesService);
        if (deps.suppressionsService) router.service(SuppressionsService, deps.suppressionsService);
        if (deps.campaignsService) router.service(CampaignsService, deps.campaignsService);
        if (deps.creditsService) router.service(CreditsService, deps.creditsService);
        if (deps.integrationsService) router.service(IntegrationsService, deps.integrationsService);
        if (deps.sendingStatusService) router.service(SendingStatusService, deps.sendingStatusService);
        if (deps.domainsService) router.service(DomainsService, deps.domainsService);
        if (deps.sendersService) router.service(SendersService, deps.sendersService);
        if (deps.statsService) router.service(StatsService, deps.statsService);
        serveWithBodyLimits(router, MailService, mail, deps.config.maxBodyBytes);
        if (deps.messageContentService) router.service(MessageContentService, deps.messageContentService);
      }
      return;
    }
    if (deps.people) {
      // No idempotency records: API keys are refused here (refuse_api_keys) or the answers are reads.
      router.service(SessionService, deps.people.sessionService);
      router.service(MembersService, deps.people.membersService);
      router.service(ApiKeysService, deps.people.apiKeysService);
      router.service(AuditService, deps.people.auditService);
      // A read for member sessions (the screen's message preview); API keys are refused by the contract.
      if (deps.messageContentService) router.service(MessageContentService, deps.messageContentService);
    }
    // Inside every interceptor, so after authentication: records are per API key.
    serveWithBodyLimits(router, MailService, withIdempotency(MailService, mail, deps.idempotency), deps.config.maxBodyBytes);
    router.service(WebhooksService, withIdempotency(WebhooksService, deps.webhooksService, deps.idempotency));
    router.service(ListsService, withIdempotency(ListsService, deps.listsService, deps.idempotency));
    if (deps.integrationsService) {
      router.service(IntegrationsService, withIdempotency(IntegrationsService, deps.integrationsService, deps.idempotency));
    }
    if (deps.signupFormsService) {
      router.service(SignupFormsService, withIdempotency(SignupFormsService, deps.signupFormsService, deps.idempotency));
    }
    if (deps.reportsService) router.service(ReportsService, withIdempotency(ReportsService, deps.reportsService, deps.idempotency));
    if (deps.templatesService) router.service(TemplatesService, withIdempotency(TemplatesService, deps.templatesService, deps.idempotency));
    if (deps.suppressionsService) {
      router.service(SuppressionsService, withIdempotency(SuppressionsService, deps.suppressionsService, deps.idempotency));
    }
    if (deps.campaignsService) {
      router.service(CampaignsService, withIdempotency(CampaignsService, deps.campaignsService, deps.idempotency));
    }
    if (deps.creditsService) router.service(CreditsService, deps.creditsService);
    if (deps.sendingStatusService) router.service(SendingStatusService, deps.sendingStatusService);
    if (deps.domainsService) router.service(DomainsService, withIdempotency(DomainsService, deps.domainsService, deps.idempotency));
    if (deps.sendersService) router.service(SendersService, withIdempotency(SendersService, deps.sendersService, deps.idempotency));
    if (deps.statsService) router.service(StatsService, deps.statsService);
  };
}

/**
 * The health check and server reflection are open to every caller, like
 * GET /readyz and the OpenAPI document: no token, no rate limit.
 */
function exceptHealth(interceptor: Interceptor): Interceptor {
  return (next) => {
    const intercepted = interceptor(next);
    return (req) => (OPEN_SERVICE_NAMES.has(req.service.typeName) ? next(req) : intercepted(req));
  };
}

/** One per listener kind, each with the failed-authentication counts of its kind of listener. */
function authorizerFor(deps: ApiDependencies, listener: Listener, failedAuthentications: FailedAuthentications): Authorize {
  return createAuthorizer({
    authenticator: deps.authenticator,
    rateLimiter: deps.rateLimiter,
    defaultRequestsPerMinute: deps.config.requestsPerMinute,
    operatorToken: deps.config.operatorToken,
    failedAuthentications,
    listener,
    ...(deps.people ? { sessions: deps.people.sessions, companies: deps.people.companies, allowedOrigins: deps.people.allowedOrigins } : {}),
  });
}

function interceptorsFor(authorize: Authorize, log: FastifyInstance["log"], deps: ApiDependencies): Interceptor[] {
  return [
    errorsInterceptor({ error: (details, message) => log.error(details, message) }, deps.classifyUnexpected),
    exceptHealth(authInterceptor(authorize)),
    exceptHealth(contractValidationInterceptor()),
    exceptHealth(wireValuesInterceptor()),
  ];
}

/** Registers every door of `listener` on one Fastify instance. */
async function registerApi(
  app: FastifyInstance,
  deps: ApiDependencies,
  authorize: Authorize,
  listener: Listener,
  failedAuthentications: FailedAuthentications,
): Promise<void> {
  const routes = routesFor(deps, listener);
  const interceptors = interceptorsFor(authorize, app.log, deps);
  const readMaxBytes = deps.config.maxBodyBytes;
  const metrics = deps.metrics;
  // Outermost, so that it sees the code the errors interceptor settled on.
  const withMetrics = (door?: "rest") => (metrics ? [metrics.rpcInterceptor(door), ...interceptors] : interceptors);

  addResponseHeaders(app);
  refuseWhileClosing(app);
  app.setNotFoundHandler((request, reply) =>
    sendApiError(reply, new ApiError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}.`)),
  );
  app.setErrorHandler((error, request, reply) => sendApiError(reply, toApiError(error, request)));
  metrics?.observeRequests(app, listener);
  healthRoutes(app, deps.readiness, listener === "operator");

  const connect = { routes: refuseUndecodableRequests(routes), interceptors: withMetrics(), readMaxBytes, jsonOptions: connectJsonOptions };
  // Unary gRPC calls take a direct path (src/transport/connect/unary-grpc-fast-path.ts); the rest goes on to Connect's plugin.
  app.addHook("preHandler", unaryGrpcFastPath({ ...connect, readMaxBytesOf: (method) => bodyLimitOf(method, readMaxBytes) }));
  await app.register(fastifyConnectPlugin, connect);
  if (listener === "operator") {
    app.get("/metrics", async (_request, reply) => {
      if (!metrics) return sendApiError(reply, new ApiError("NOT_FOUND", "No metrics in this process."));
      const { contentType, body } = await metrics.scrape();
      return reply.type(contentType).send(body);
    });
    return;
  }
  await app.register(async (scope) => {
    utf8JsonBodies(scope);
    // The same routes and interceptors, called in process without encoding (src/transport/rest/direct-transport.ts).
    const transport = createDirectTransport(routes, { interceptors: withMetrics("rest") });
    await restBridge(scope, { service: MailService, transport, authorize, bodyLimitOf: (method) => bodyLimitOf(method, readMaxBytes) });
    await restBridge(scope, { service: WebhooksService, transport, authorize });
    await restBridge(scope, { service: ListsService, transport, authorize });
    if (deps.integrationsService) await restBridge(scope, { service: IntegrationsService, transport, authorize });
    if (deps.signupFormsService) await restBridge(scope, { service: SignupFormsService, transport, authorize });
    if (deps.reportsService) await restBridge(scope, { service: ReportsService, transport, authorize });
    if (deps.templatesService) await restBridge(scope, { service: TemplatesService, transport, authorize });
    if (deps.suppressionsService) await restBridge(scope, { service: SuppressionsService, transport, authorize });
    if (deps.campaignsService) await restBridge(scope, { service: CampaignsService, transport, authorize });
    if (deps.creditsService) await restBridge(scope, { service: CreditsService, transport, authorize });
    if (deps.sendingStatusService) await restBridge(scope, { service: SendingStatusService, transport, authorize });
    if (deps.domainsService) await restBridge(scope, { service: DomainsService, transport, authorize });
    if (deps.sendersService) await restBridge(scope, { service: SendersService, transport, authorize });
    if (deps.statsService) await restBridge(scope, { service: StatsService, transport, authorize });
    if (deps.people) {
      await restBridge(scope, { service: MembersService, transport, authorize });
      await restBridge(scope, { service: ApiKeysService, transport, authorize });
      await restBridge(scope, { service: AuditService, transport, authorize });
    }
    openApiRoute(scope);
  });
  if (deps.hostedForms) await registerHostedForms(app, deps.hostedForms);
  if (deps.tracking) await registerTrackingRoutes(app, deps.tracking);
  if (deps.adminScreen !== false) await registerAdminScreen(app, deps.adminScreen ?? {});
  if (deps.sesNotifications) await registerSesNotifications(app, deps.sesNotifications, failedAuthentications);
}

/**
 * While closing, new requests on connections still open answer 503
 * SERVICE_UNAVAILABLE in the error shape (Fastify's own 503 has neither the shape
 * nor X-Request-Id, so return503OnClosing is off), and every HTTP/1.1
 * answer closes its connection: a keep-alive connection busy when closing
 * began would otherwise hold the shutdown until its keep-alive timeout.
 */
function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onRequest", async (_request, reply) => {
    if (closing) {
      return sendApiError(reply, new ApiError("SERVICE_UNAVAILABLE", "The service is shutting down; retry the request."));
    }
    return undefined;
  });
  app.addHook("onSend", async (request, reply) => {
    if (closing && request.raw.httpVersionMajor === 1) reply.header("connection", "close");
  });
}

/** Path parameters are ids and email addresses (at most 254 characters, some percent-encoded). */
const MAX_PARAM_LENGTH = 512;

/** Node's HTTP/1.1 limit of the request line and headers together (its default, stated). */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Pino options with the redacting request serializer (src/transport/http/log-redaction.ts),
 * written to standard output a turn of the event loop at a time unless a stream is given.
 */
function loggerOptions(deps: ApiDependencies): FastifyServerOptions["logger"] {
  const given = deps.logger ?? { level: deps.config.logLevel };
  if (given === false) return false;
  const options = given === true ? {} : given;
  return { stream: coalescedStdout(), ...options, serializers: { ...options.serializers, req: redactedRequest } };
}

/**
 * TRUST_PROXY: the public listeners take the client's address from
 * X-Forwarded-For when the load balancer in front is trusted; the operator
 * listener, never behind one, always uses the peer's. A hop count trusts
 * the peer and the next hops (Fastify 5 dropped hop counts, so as a
 * function): only when every request comes through the balancer.
 */
function trustProxyOf(deps: ApiDependencies, listener: Listener): FastifyServerOptions["trustProxy"] {
  const trust = deps.config.trustProxy;
  if (listener === "operator" || trust === undefined) return false;
  if (typeof trust === "number") return (_address: string, hop: number) => hop < trust;
  return typeof trust === "object" ? [...trust] : trust;
}

function baseOptions(deps: ApiDependencies, timeouts: ListenerTimeouts, listener: Listener): FastifyServerOptions {
  return {
    trustProxy: trustProxyOf(deps, listener),
    logger: loggerOptions(deps),
    bodyLimit: deps.config.maxBodyBytes,
    genReqId: requestIdFor,
    requestIdHeader: false,
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    connectionTimeout: timeouts.idleMs,
  };
}

/**
 * fastify#5866: closing an HTTP/2 server waits for idle client sessions,
 * so sessions are tracked and closed explicitly.
 */
function closeSessionsOnClose(h2c: FastifyInstance): void {
  const sessions = new Set<Http2Session>();
  h2c.server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  h2c.addHook("preClose", async () => {
    for (const session of sessions) session.close();
    const deadline = setTimeout(() => {
      for (const session of sessions) session.destroy();
    }, 5_000);
    deadline.unref();
  });
}

function http1Listener(deps: ApiDependencies, timeouts: ListenerTimeouts, listener: Listener): FastifyInstance {
  return Fastify({
    ...baseOptions(deps, timeouts, listener),
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      connectionsCheckingInterval: connectionsCheckingInterval(timeouts),
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    clientErrorHandler: clientErrorHandler({ maxHeaderBytes: MAX_HEADER_BYTES, requestTimeoutMs: timeouts.requestMs }),
  });
}

function h2cListener(deps: ApiDependencies, timeouts: ListenerTimeouts, listener: Listener): FastifyInstance {
  const h2c = Fastify({
    ...(baseOptions(deps, timeouts, listener) as FastifyHttp2Options<Http2Server>),
    http2: true,
    http2SessionTimeout: timeouts.http2SessionMs,
  }) as unknown as FastifyInstance;
  http2RequestDeadline(h2c, timeouts);
  closeSessionsOnClose(h2c);
  return h2c;
}

/** Resolves the URL a server bound to `host` answers on. */
function urlOf(server: Server, host: string, scheme: "http" | "https" = "http"): string {
  const address = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  return `${scheme}://${shown === "0.0.0.0" || shown === "[::]" ? "127.0.0.1" : shown}:${address.port}`;
}

export async function buildApiServers(deps: ApiDependencies): Promise<ApiServers> {
  const timeouts: ListenerTimeouts = { ...DEFAULT_LISTENER_TIMEOUTS, ...deps.timeouts };
  const http = http1Listener(deps, timeouts, "public");
  const h2c = h2cListener(deps, timeouts, "public");
  const operatorHttp = http1Listener(deps, timeouts, "operator");
  const operatorH2c = h2cListener(deps, timeouts, "operator");
  // The public listeners share one budget of failed authentications per client address; the operator
  // listener keeps its own, so that no public client's bad keys (or a shared proxy address) lock out mailctl.
  const failedAuthentications = new FailedAuthentications();
  const operatorFailedAuthentications = new FailedAuthentications();
  const authorize = authorizerFor(deps, "public", failedAuthentications);
  const operatorAuthorize = authorizerFor(deps, "operator", operatorFailedAuthentications);
  await registerApi(http, deps, authorize, "public", failedAuthentications);
  await registerApi(h2c, deps, authorize, "public", failedAuthentications);
  await registerApi(operatorHttp, deps, operatorAuthorize, "operator", operatorFailedAuthentications);
  await registerApi(operatorH2c, deps, operatorAuthorize, "operator", operatorFailedAuthentications);
  // Neither operator instance listens: the one operator port hands them its connections.
  const operator = dualProtocolServer(operatorHttp.server as HttpServer, operatorH2c.server as unknown as Http2Server, deps.operatorTls);

  return {
    http,
    h2c,
    operatorHttp,
    operatorH2c,
    async listen() {
      const host = deps.config.host;
      const httpUrl = await http.listen({ host, port: deps.config.httpPort });
      const grpcUrl = await h2c.listen({ host, port: deps.config.grpcPort });
      await Promise.all([operatorHttp.ready(), operatorH2c.ready()]);
      const operatorHost = deps.config.operatorHost;
      await new Promise<void>((resolve, reject) => {
        operator.server.once("error", reject);
        operator.server.listen({ host: operatorHost, port: deps.config.operatorPort }, () => {
          operator.server.off("error", reject);
          resolve();
        });
      });
      return { httpUrl, grpcUrl, operatorUrl: urlOf(operator.server, operatorHost, deps.operatorTls ? "https" : "http") };
    },
    async close() {
      await Promise.all([
        http.close(),
        h2c.close(),
        operator.close(() => Promise.all([operatorHttp.close(), operatorH2c.close()])),
      ]);
    },
  };
}
