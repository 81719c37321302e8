import type { FastifyReply } from "fastify";
import type { ApiError } from "../../contract/api-error.ts";
import { boundedApiError } from "../bounded-errors.ts";
import { commonAnswerHeaders } from "./request-context.ts";

/** The error body of every JSON HTTP answer: `{ error: { code, message } }`. */
export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

export function errorBody(error: ApiError): ErrorBody {
  return { error: { code: error.code, message: error.message } };
}

/**
 * Sends an ApiError as a JSON HTTP answer, with the headers it carries and
 * the ones every answer carries (set here too: Fastify's own error paths,
 * such as a malformed URL, answer without running the onRequest hooks).
 */
export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  const bounded = boundedApiError(error);
  reply.headers(commonAnswerHeaders(reply.request.id));
  // Fastify asks to close the connection after a body error; HTTP/2 has no such header (Node warns and drops it).
  if (reply.request.raw.httpVersionMajor === 2) reply.removeHeader("connection");
  for (const [name, value] of Object.entries(bounded.headers)) reply.header(name, value);
  return reply.code(bounded.httpStatus).type("application/json").send(errorBody(bounded));
}
