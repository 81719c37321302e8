import { constants as http2, type Http2ServerRequest } from "node:http2";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../contract/api-error.ts";

/**
 * How long the listeners wait for clients. Without limits a client that
 * sends headers and then dribbles (or stops sending) its body holds a
 * socket, a stream and a request's memory for ever.
 */
export interface ListenerTimeouts {
  /**
   * The whole request, headers and body, must arrive within this. HTTP/1.1:
   * Node's requestTimeout (answered 400 on the socket, which is closed).
   * h2c: a deadline per stream (answered 400, the stream is then closed).
   */
  readonly requestMs: number;
  /** HTTP/1.1: the headers must arrive within this (Node's headersTimeout; at most requestMs). */
  readonly headersMs: number;
  /** A connection with no traffic at all is closed after this (Fastify connectionTimeout). */
  readonly idleMs: number;
  /**
   * HTTP/1.1: an idle keep-alive connection is closed after this. Longer
   * than the usual load balancer idle timeout (60 s), so that the balancer,
   * not us, closes idle connections and never reuses one we just closed.
   */
  readonly keepAliveMs: number;
  /** h2c: a session with no traffic is closed after this (Fastify http2SessionTimeout). */
  readonly http2SessionMs: number;
}

export const DEFAULT_LISTENER_TIMEOUTS: ListenerTimeouts = {
  requestMs: 30_000,
  headersMs: 10_000,
  idleMs: 75_000,
  keepAliveMs: 65_000,
  http2SessionMs: 75_000,
};

/** How often Node looks for HTTP/1.1 requests past their deadline (its default, 30 s, is too coarse). */
export function connectionsCheckingInterval(timeouts: ListenerTimeouts): number {
  return Math.max(100, Math.min(5_000, Math.floor(Math.min(timeouts.requestMs, timeouts.headersMs) / 4)));
}

export function bodyTimeoutError(timeouts: ListenerTimeouts): ApiError {
  return new ApiError("VALIDATION_ERROR", `The request was not received completely within ${Math.round(timeouts.requestMs / 1000)} s.`);
}

/**
 * The h2c listener's request deadline: HTTP/2 has no requestTimeout, and a
 * session that receives a byte now and then is never idle. When a stream's
 * body has not fully arrived by the deadline, the request fails with a 400
 * VALIDATION_ERROR (the body reader sees an error, so a partial body is
 * never handled as if it were complete) and, once the answer is out, the
 * stream is closed, which tells the client to stop sending.
 */
export function http2RequestDeadline(app: FastifyInstance, timeouts: ListenerTimeouts): void {
  app.addHook("onRequest", (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const raw = request.raw as unknown as Http2ServerRequest;
    const stream = raw.stream;
    if (!stream || stream.endAfterHeaders) {
      done();
      return;
    }
    const timer = setTimeout(() => {
      if (stream.destroyed || stream.closed || stream.state.remoteClose) return;
      raw.destroy(bodyTimeoutError(timeouts));
      const closeStream = () => {
        if (!stream.destroyed && !stream.closed) stream.close(http2.NGHTTP2_NO_ERROR);
      };
      // Once our side of the stream is finished (the answer is out), not when
      // the response object says so: that waits for the client's side too.
      if (stream.writableFinished) closeStream();
      else stream.once("finish", closeStream);
      // An answer that never finishes must not keep the stream either.
      setTimeout(closeStream, timeouts.requestMs).unref();
    }, timeouts.requestMs);
    timer.unref();
    stream.once("close", () => clearTimeout(timer));
    done();
  });
}
