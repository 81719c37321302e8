import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { REQUEST_ID_HEADER } from "../../contract/names.ts";

/** An incoming X-Request-Id is echoed only when it is short and plain. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Request header through which the server hands the client's address to
 * the RPCs (the failed-authentication limit counts per address). Set by the
 * server on every request; a value the client sent is overwritten, so the
 * RPCs can trust it. The REST bridge forwards it to its in-process calls.
 */
export const CLIENT_ADDRESS_HEADER = "x-mail-client-address";

/**
 * Request header through which the server hands the request's own origin
 * (`scheme://host[:port]`, as the server or its trusted proxies saw it) to
 * the RPCs: the session door compares a browser's Origin with it. Set by the
 * server on every request, overwriting a client's value, because HTTP/2
 * carries the host in the `:authority` pseudo-header, which the RPCs'
 * Headers cannot hold.
 */
export const REQUEST_ORIGIN_HEADER = "x-mail-request-origin";

/** Fastify's genReqId: reuse a sane incoming X-Request-Id, else a new UUID. */
export function requestIdFor(raw: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = raw.headers[REQUEST_ID_HEADER];
  return typeof incoming === "string" && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Browsers take every answer as the type it declares, never a guess from its bytes (JSON, HTML, errors, 404s alike). */
export const NOSNIFF = { "x-content-type-options": "nosniff" } as const;

/** The headers every answer carries, on every door: the request id, `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`. */
export function commonAnswerHeaders(requestId: string): Record<string, string> {
  return { [REQUEST_ID_HEADER]: requestId, "cache-control": "no-store", ...NOSNIFF };
}

/**
 * Sets the common answer headers, and hands the request id (and the
 * client's address) to the RPC handlers as request headers. Set in
 * onRequest so that Connect's handlers, which write the raw response
 * themselves, carry them too.
 */
export function addResponseHeaders(app: FastifyInstance): void {
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    request.headers[REQUEST_ID_HEADER] = request.id;
    // Always the server's own reading of the peer (or of the trusted proxies' X-Forwarded-For): a client's value is overwritten.
    request.headers[CLIENT_ADDRESS_HEADER] = request.ip ?? "";
    request.headers[REQUEST_ORIGIN_HEADER] = requestOrigin(request);
    reply.headers(commonAnswerHeaders(request.id));
  });
}

/** The origin this request was made to: its scheme and host (X-Forwarded-Proto / -Host from trusted proxies only); empty when it has no host. */
function requestOrigin(request: FastifyRequest): string {
  const host = request.host;
  if (!host) return "";
  try {
    return new URL(`${request.protocol}://${host}`).origin;
  } catch {
    return "";
  }
}
