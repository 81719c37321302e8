import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { REQUEST_ID_HEADER } from "../connect/context.ts";

/** An incoming X-Request-Id is echoed only when it is short and plain. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Fastify's genReqId: reuse a sane incoming X-Request-Id, else a new UUID. */
export function requestIdFor(raw: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = raw.headers[REQUEST_ID_HEADER];
  return typeof incoming === "string" && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Headers every answer carries, on every door: the request id (also handed
 * to the RPC handlers as a request header) and `Cache-Control: no-store`.
 * Set in onRequest so that Connect's handlers, which write the raw response
 * themselves, carry them too.
 */
export function addResponseHeaders(app: FastifyInstance): void {
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    request.headers[REQUEST_ID_HEADER] = request.id;
    reply.header(REQUEST_ID_HEADER, request.id);
    reply.header("cache-control", "no-store");
  });
}
