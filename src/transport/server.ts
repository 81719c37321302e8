import type { Http2Server, Http2Session } from "node:http2";
import type { ServiceImpl, Interceptor, ConnectRouter } from "@connectrpc/connect";
import { createRouterTransport } from "@connectrpc/connect";
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
import { EventsService } from "../gen/mail/v1/events_pb.js";
import { type Authorize, authInterceptor, createAuthorizer } from "./connect/auth-interceptor.ts";
import { errorsInterceptor } from "./connect/errors-interceptor.ts";
import { FailedAuthentications } from "./connect/failed-authentications.ts";
import { withIdempotency } from "./connect/idempotency-interceptor.ts";
import { requiredFieldsInterceptor } from "./connect/required-fields-interceptor.ts";
import { type MailServiceDeps, mailServiceImpl } from "./connect/mail/index.ts";
import { sendApiError } from "./http/error-reply.ts";
import { clientErrorHandler, frameworkErrors } from "./http/framework-errors.ts";
import {
  connectionsCheckingInterval,
  DEFAULT_LISTENER_TIMEOUTS,
  http2RequestDeadline,
  type ListenerTimeouts,
} from "./http/listener-timeouts.ts";
import { redactedRequest } from "./http/log-redaction.ts";
import { addResponseHeaders, requestIdFor } from "./http/request-context.ts";
import { toApiError } from "./http/to-api-error.ts";
import { openApiRoute } from "./openapi/route.ts";
import { restBridge } from "./rest/bridge.ts";

/**
 * One contract, many doors. Two listeners are built from the same routes,
 * because Node cannot serve cleartext HTTP/2 and HTTP/1.1 on one socket:
 *
 * - HTTP/1.1 (HTTP_PORT, default 8080): the JSON /mail/v1 routes, Connect,
 *   gRPC-Web and the OpenAPI document;
 * - h2c (GRPC_PORT, default 8081): gRPC, Connect and the same JSON routes.
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
  /** Internal services publish campaign and order events (operator token; gRPC/Connect only). Not served when absent. */
  readonly eventsService?: ServiceImpl<typeof EventsService>;
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
}

export interface ApiServers {
  readonly http: FastifyInstance;
  readonly h2c: FastifyInstance;
  /** Listens on the configured ports (0 picks free ones); resolves the bound URLs. */
  listen(): Promise<{ httpUrl: string; grpcUrl: string }>;
  close(): Promise<void>;
}

function routesFor(deps: ApiDependencies): (router: ConnectRouter) => void {
  const mail = mailServiceImpl({ ...deps.mail, config: deps.config });
  return (router) => {
    // Inside every interceptor, so after authentication: records are per API key.
    router.service(MailService, withIdempotency(MailService, mail, deps.idempotency));
    router.service(WebhooksService, withIdempotency(WebhooksService, deps.webhooksService, deps.idempotency));
    router.service(ListsService, withIdempotency(ListsService, deps.listsService, deps.idempotency));
    router.service(AdminService, deps.adminService);
    if (deps.eventsService) router.service(EventsService, deps.eventsService);
  };
}

/** One per process: both listeners share the failed-authentication counts. */
function authorizerFor(deps: ApiDependencies): Authorize {
  return createAuthorizer({
    authenticator: deps.authenticator,
    rateLimiter: deps.rateLimiter,
    defaultRequestsPerMinute: deps.config.requestsPerMinute,
    operatorToken: deps.config.operatorToken,
    failedAuthentications: new FailedAuthentications(),
  });
}

function interceptorsFor(authorize: Authorize, log: FastifyInstance["log"], deps: ApiDependencies): Interceptor[] {
  return [
    errorsInterceptor({ error: (details, message) => log.error(details, message) }, deps.classifyUnexpected),
    authInterceptor(authorize),
    requiredFieldsInterceptor(),
  ];
}

/** Registers every door on one Fastify instance. */
async function registerApi(app: FastifyInstance, deps: ApiDependencies, authorize: Authorize): Promise<void> {
  const routes = routesFor(deps);
  const interceptors = interceptorsFor(authorize, app.log, deps);
  const readMaxBytes = deps.config.maxBodyBytes;

  addResponseHeaders(app);
  refuseWhileClosing(app);
  app.setNotFoundHandler((request, reply) =>
    sendApiError(reply, new ApiError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}.`)),
  );
  app.setErrorHandler((error, request, reply) => sendApiError(reply, toApiError(error, request)));

  await app.register(fastifyConnectPlugin, { routes, interceptors, readMaxBytes });
  await app.register(async (scope) => {
    const transport = createRouterTransport(routes, { router: { interceptors, readMaxBytes } });
    await restBridge(scope, { service: MailService, transport, authorize });
    await restBridge(scope, { service: WebhooksService, transport, authorize });
    await restBridge(scope, { service: ListsService, transport, authorize });
    openApiRoute(scope);
  });
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

/** Pino options with the redacting request serializer (src/transport/http/log-redaction.ts). */
function loggerOptions(deps: ApiDependencies): FastifyServerOptions["logger"] {
  const given = deps.logger ?? { level: deps.config.logLevel };
  if (given === false) return false;
  const options = given === true ? {} : given;
  return { ...options, serializers: { ...options.serializers, req: redactedRequest } };
}

function baseOptions(deps: ApiDependencies, timeouts: ListenerTimeouts): FastifyServerOptions {
  return {
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

export async function buildApiServers(deps: ApiDependencies): Promise<ApiServers> {
  const timeouts: ListenerTimeouts = { ...DEFAULT_LISTENER_TIMEOUTS, ...deps.timeouts };
  const http = Fastify({
    ...baseOptions(deps, timeouts),
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      connectionsCheckingInterval: connectionsCheckingInterval(timeouts),
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    clientErrorHandler: clientErrorHandler({ maxHeaderBytes: MAX_HEADER_BYTES, requestTimeoutMs: timeouts.requestMs }),
  });
  const h2c = Fastify({
    ...(baseOptions(deps, timeouts) as FastifyHttp2Options<Http2Server>),
    http2: true,
    http2SessionTimeout: timeouts.http2SessionMs,
  }) as unknown as FastifyInstance;
  http2RequestDeadline(h2c, timeouts);
  const authorize = authorizerFor(deps);
  await registerApi(http, deps, authorize);
  await registerApi(h2c, deps, authorize);

  // fastify#5866: closing an HTTP/2 server waits for idle client sessions,
  // so sessions are tracked and closed explicitly.
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

  return {
    http,
    h2c,
    async listen() {
      const host = deps.config.host;
      const httpUrl = await http.listen({ host, port: deps.config.httpPort });
      const grpcUrl = await h2c.listen({ host, port: deps.config.grpcPort });
      return { httpUrl, grpcUrl };
    },
    async close() {
      await Promise.all([http.close(), h2c.close()]);
    },
  };
}
