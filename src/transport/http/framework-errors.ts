import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../contract/api-error.ts";
import { errorBody, sendApiError } from "./error-reply.ts";
import { commonAnswerHeaders } from "./request-context.ts";
import { toApiError } from "./to-api-error.ts";

/**
 * Fastify's own answers, in the contract's shape. Fastify answers some
 * requests before any route or hook runs, each in its own format and
 * without our headers:
 *
 * - `frameworkErrors`: a path that is not valid percent-encoding
 *   (FST_ERR_BAD_URL) and a path parameter over maxParamLength
 *   (FST_ERR_MAX_PARAM_LENGTH);
 * - `clientErrorHandler`: what Node's HTTP/1.1 parser refuses before there
 *   is a request at all (headers too large, an invalid Content-Length,
 *   malformed HTTP, a request not received within requestTimeout). The
 *   answer is written on the socket, which is then closed.
 *
 * Every one answers `{"error":{"code","message"}}` with X-Request-Id and
 * `Cache-Control: no-store`.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void sendApiError(reply, toApiError(error, request));
}

/** Node's error of a connection whose request could not be parsed. */
export interface ClientError extends Error {
  readonly code?: string;
}

/** The contract's error for a request Node's HTTP/1.1 parser refused. */
export function clientErrorToApiError(error: ClientError, limits: { readonly maxHeaderBytes: number; readonly requestTimeoutMs: number }): ApiError {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return new ApiError("VALIDATION_ERROR", `headers: larger than ${limits.maxHeaderBytes} bytes in total.`);
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ApiError(
        "VALIDATION_ERROR",
        `The request was not received completely within ${Math.round(limits.requestTimeoutMs / 1000)} s.`,
      );
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return new ApiError("VALIDATION_ERROR", "Content-Length: is not a valid length for this request.");
    default:
      return new ApiError("VALIDATION_ERROR", "The request is not valid HTTP/1.1.");
  }
}

/** Whether a response on this socket has already started (then nothing more may be written). */
function responseStarted(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  return current?.headersSent === true;
}

/** Fastify's clientErrorHandler of the HTTP/1.1 listener (bound to the instance). */
export function clientErrorHandler(limits: { readonly maxHeaderBytes: number; readonly requestTimeoutMs: number }) {
  return function onClientError(this: FastifyInstance, error: ClientError, socket: Socket): void {
    // A reset connection has nobody left to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const apiError = clientErrorToApiError(error, limits);
    this.log.debug({ err: error }, "refused a malformed request");
    if (socket.writable && !responseStarted(socket)) {
      const body = JSON.stringify(errorBody(apiError));
      const headers = {
        "content-type": "application/json; charset=utf-8",
        "content-length": String(Buffer.byteLength(body)),
        ...commonAnswerHeaders(randomUUID()),
        connection: "close",
      };
      const head = Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("");
      socket.write(`HTTP/1.1 ${apiError.httpStatus} ${STATUS_CODES[apiError.httpStatus] ?? ""}\r\n${head}\r\n${body}`);
    }
    socket.destroy(error);
  };
}
