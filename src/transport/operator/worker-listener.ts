import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Readiness } from "../http/health.ts";

/**
 * A worker process's own small listener (WORKER_OPERATOR_HOST:PORT,
 * default 127.0.0.1:8083), for orchestrators and Prometheus:
 *
 * - GET /livez: 200 while the process answers;
 * - GET /readyz: 200 while PostgreSQL and Temporal answer and the worker
 *   polls, else 503 saying which check failed and why (a private listener);
 * - GET /metrics: the worker's own Prometheus metrics.
 *
 * Plain node:http: the worker process loads no web framework.
 */
export interface WorkerListenerOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  readonly readiness: Readiness;
  readonly scrape: () => Promise<{ contentType: string; body: string }>;
  readonly onError?: (error: unknown) => void;
}

export interface WorkerListener {
  /** http://host:port once listening. */
  readonly url: string;
  close(): Promise<void>;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }).end(JSON.stringify(body));
}

async function answer(options: WorkerListenerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? "/").split("?")[0];
  const route = request.method === "GET" || request.method === "HEAD" ? path : undefined;
  switch (route) {
    case "/livez":
      return json(response, 200, { status: "ok" });
    case "/readyz": {
      const report = await options.readiness();
      return json(response, report.ready ? 200 : 503, { status: report.ready ? "ok" : "unavailable", checks: report.checks });
    }
    case "/metrics": {
      const { contentType, body } = await options.scrape();
      response.writeHead(200, { "content-type": contentType, "cache-control": "no-store" }).end(body);
      return;
    }
    default:
      return json(response, 404, { error: { code: "NOT_FOUND", message: `No route ${request.method} ${path}.` } });
  }
}

export async function startWorkerListener(options: WorkerListenerOptions): Promise<WorkerListener> {
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (request, response) => {
    response.setHeader("x-content-type-options", "nosniff");
    answer(options, request, response).catch((error: unknown) => {
      options.onError?.(error);
      if (!response.headersSent) json(response, 500, { error: { code: "INTERNAL_ERROR", message: "The answer could not be made." } });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  const host = shown === "0.0.0.0" || shown === "[::]" ? "127.0.0.1" : shown;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
