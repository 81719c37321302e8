import type { FastifyReply } from "fastify";
import { ApiError } from "../../contract/api-error.ts";

/** The error body of every JSON HTTP answer: `{ error: { code, message } }`. */
export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

export function errorBody(error: ApiError): ErrorBody {
  return { error: { code: error.code, message: error.message } };
}

/** Sends an ApiError as a JSON HTTP answer, with the headers it carries. */
export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.httpStatus).type("application/json").send(errorBody(error));
}
