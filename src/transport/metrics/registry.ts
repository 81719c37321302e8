import type { Interceptor } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's Prometheus metrics, served by GET /metrics on the operator
 * listener only. One registry per App (tests run several in one process,
 * and prom-client's global registry refuses a second metric of a name).
 *
 * - requests: every HTTP request of every listener by door, route and
 *   status (429s are the rate-limit rejections), with latency;
 * - RPCs: every Connect/gRPC call (the REST bridge's included) by door, RPC
 *   and Connect code, with latency;
 * - the state of the database, read at scrape time (`ScrapeSources`);
 * - Node's default process metrics.
 */

/** Which door a request came through. */
export type Door = "rest" | "grpc" | "grpc-web" | "connect" | "http";

/** What is read from the database at each scrape (src/adapters/metrics). */
export interface ScrapeSources {
  /** Messages per status. */
  messagesByStatus(): Promise<ReadonlyMap<string, number>>;
  /** Webhook deliveries per state (pending, attempting, succeeded, dead_letter). */
  webhookDeliveriesByState(): Promise<ReadonlyMap<string, number>>;
  /** Webhook attempts per outcome (success, http_error, or the error class). */
  webhookAttemptsByOutcome(): Promise<ReadonlyMap<string, number>>;
  /** Seconds from acceptance to handoff of the messages handed off since the previous call. */
  handoffSecondsSince(): Promise<readonly number[]>;
  /** The API process's PostgreSQL pool. */
  pool(): Promise<{ total: number; idle: number; waiting: number; max: number }>;
}

export interface Metrics {
  readonly registry: Registry;
  /** onResponse hook counting every request of `app` (listener: public or operator). */
  observeRequests(app: FastifyInstance, listener: "public" | "operator"): void;
  /** Outermost Connect interceptor; `door` fixed for the REST bridge, else read from the content type. */
  rpcInterceptor(door?: Door): Interceptor;
  /** The Prometheus text exposition. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The door of an HTTP request, from its route and content type. */
export function doorOf(request: FastifyRequest): Door {
  const contentType = String(request.headers["content-type"] ?? "");
  if (contentType.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType.startsWith("application/grpc")) return "grpc";
  const route = request.routeOptions.url ?? "";
  if (route.startsWith("/mail/v1/")) return "rest";
  if (/^\/[a-z0-9_.]+\.[A-Za-z0-9_]+Service\//i.test(route) || /^\/grpc\.health\.v1\./.test(route)) return "connect";
  return "http";
}

function doorOfHeader(header: Headers): Door {
  const contentType = header.get("content-type") ?? "";
  if (contentType.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/** Gauges read at scrape time: one query per family, failures leave the family empty. */
function scrapeGauges(registry: Registry, sources: ScrapeSources | undefined, onError: (error: unknown) => void): void {
  if (!sources) return;
  const byLabel = (name: string, help: string, label: string, read: () => Promise<ReadonlyMap<string, number>>) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const [value, count] of await read()) this.set({ [label]: value }, count);
        } catch (error) {
          onError(error);
        }
      },
    });
  byLabel("mail_messages", "Messages by status (all companies).", "status", () => sources.messagesByStatus());
  byLabel(
    "mail_webhook_deliveries",
    "Webhook deliveries by state: attempting are in flight, dead_letter are dead letters.",
    "state",
    () => sources.webhookDeliveriesByState(),
  );
  byLabel("mail_webhook_attempts", "Webhook delivery attempts by outcome.", "outcome", () => sources.webhookAttemptsByOutcome());
  new Histogram({
    name: "mail_message_handoff_seconds",
    help: "Time from accepting a message to handing it to the email service (its sent event), observed at scrape time.",
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [registry],
    async collect() {
      try {
        for (const seconds of await sources.handoffSecondsSince()) this.observe(seconds);
      } catch (error) {
        onError(error);
      }
    },
  });
  new Gauge({
    name: "mail_db_pool_connections",
    help: "Connections of the API's PostgreSQL pool: total, idle, waiting (callers waiting for one), max.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const pool = await sources.pool();
        this.set({ state: "total" }, pool.total);
        this.set({ state: "idle" }, pool.idle);
        this.set({ state: "waiting" }, pool.waiting);
        this.set({ state: "max" }, pool.max);
      } catch (error) {
        onError(error);
      }
    },
  });
}

export function createMetrics(sources?: ScrapeSources, onError: (error: unknown) => void = () => {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "mail_http_requests_total",
    help: "HTTP requests by listener, door, route, method and status (429: rate limited).",
    labelNames: ["listener", "door", "route", "method", "status"],
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: "mail_http_request_duration_seconds",
    help: "HTTP request latency by listener, door and route.",
    labelNames: ["listener", "door", "route"],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const rpcs = new Counter({
    name: "mail_rpc_requests_total",
    help: "RPCs (Connect, gRPC, gRPC-Web and the REST bridge) by door, rpc and code.",
    labelNames: ["door", "rpc", "code"],
    registers: [registry],
  });
  const rpcSeconds = new Histogram({
    name: "mail_rpc_duration_seconds",
    help: "RPC latency by door and rpc.",
    labelNames: ["door", "rpc"],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  scrapeGauges(registry, sources, onError);

  return {
    registry,
    observeRequests(app, listener) {
      app.addHook("onResponse", async (request: FastifyRequest, reply: FastifyReply) => {
        // Unmatched URLs share one label: a scanner must not grow the series.
        const route = request.routeOptions.url ?? "(no route)";
        const door = doorOf(request);
        requests.inc({ listener, door, route, method: request.method, status: String(reply.statusCode) });
        requestSeconds.observe({ listener, door, route }, reply.elapsedTime / 1000);
      });
    },
    rpcInterceptor(fixed) {
      return (next) => async (req) => {
        const door = fixed ?? doorOfHeader(req.header);
        const rpc = `${req.service.typeName}/${req.method.name}`;
        const stop = rpcSeconds.startTimer({ door, rpc });
        try {
          const response = await next(req);
          rpcs.inc({ door, rpc, code: "ok" });
          return response;
        } catch (error) {
          rpcs.inc({ door, rpc, code: Code[ConnectError.from(error).code] });
          throw error;
        } finally {
          stop();
        }
      };
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
