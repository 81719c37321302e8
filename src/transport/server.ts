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
import { authInterceptor } from "./connect/auth-interceptor.ts";
import { errorsInterceptor } from "./connect/errors-interceptor.ts";
import { withIdempotency } from "./connect/idempotency-interceptor.ts";
import { type MailServiceDeps, mailServiceImpl } from "./connect/mail-service.ts";
import { sendApiError } from "./http/error-reply.ts";
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
  /** Pino options or false; tests pass { level: "warn" }. */
  readonly logger?: FastifyServerOptions["logger"];
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
    router.service(AdminService, deps.adminService);
  };
}

function interceptorsFor(deps: ApiDependencies, log: FastifyInstance["log"]): Interceptor[] {
  return [
    errorsInterceptor({ error: (details, message) => log.error(details, message) }),
    authInterceptor({
      authenticator: deps.authenticator,
      rateLimiter: deps.rateLimiter,
      defaultRequestsPerMinute: deps.config.requestsPerMinute,
      operatorToken: deps.config.operatorToken,
    }),
  ];
}

/** Registers every door on one Fastify instance. */
async function registerApi(app: FastifyInstance, deps: ApiDependencies): Promise<void> {
  const routes = routesFor(deps);
  const interceptors = interceptorsFor(deps, app.log);
  const readMaxBytes = deps.config.maxBodyBytes;

  addResponseHeaders(app);
  app.setNotFoundHandler((request, reply) =>
    sendApiError(reply, new ApiError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}.`)),
  );
  app.setErrorHandler((error, request, reply) => sendApiError(reply, toApiError(error, request)));

  await app.register(fastifyConnectPlugin, { routes, interceptors, readMaxBytes });
  await app.register(async (scope) => {
    const transport = createRouterTransport(routes, { router: { interceptors, readMaxBytes } });
    await restBridge(scope, { service: MailService, transport });
    openApiRoute(scope);
  });
}

function baseOptions(deps: ApiDependencies): FastifyServerOptions {
  return {
    logger: deps.logger ?? { level: deps.config.logLevel },
    bodyLimit: deps.config.maxBodyBytes,
    genReqId: requestIdFor,
    requestIdHeader: false,
    return503OnClosing: true,
  };
}

export async function buildApiServers(deps: ApiDependencies): Promise<ApiServers> {
  const http = Fastify(baseOptions(deps));
  const h2c = Fastify({ ...(baseOptions(deps) as FastifyHttp2Options<Http2Server>), http2: true }) as unknown as FastifyInstance;
  await registerApi(http, deps);
  await registerApi(h2c, deps);

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
