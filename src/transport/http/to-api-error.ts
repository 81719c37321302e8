import type { FastifyRequest } from "fastify";
import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";
import { boundedApiError } from "../bounded-errors.ts";

interface FastifyErrorLike {
  code?: string;
  statusCode?: number;
  message?: string;
}

function maxParamLength(request: FastifyRequest): number {
  const config = request.server.initialConfig;
  return config.routerOptions?.maxParamLength ?? config.maxParamLength ?? 100;
}

/**
 * Fastify's own request errors, by code, as the contract's errors. Every
 * client mistake is a 400 VALIDATION_ERROR (the spec's table has no 414,
 * 415 or 431), a body over the limit is 413 PAYLOAD_TOO_LARGE.
 */
function fastifyRequestError(error: FastifyErrorLike, request: FastifyRequest): ApiError | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError(
        "PAYLOAD_TOO_LARGE",
        `The request body is larger than ${request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit} bytes.`,
      );
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_TYPE":
      return new ApiError("VALIDATION_ERROR", "body: send JSON with `Content-Type: application/json`.");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new ApiError("VALIDATION_ERROR", "body: its length differs from the Content-Length header.");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError("VALIDATION_ERROR", "body: is empty; send a JSON object.");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new ApiError("VALIDATION_ERROR", "body: is not valid JSON.");
    case "FST_ERR_BAD_URL":
      return new ApiError("VALIDATION_ERROR", "path: is not valid percent-encoded UTF-8.");
    case "FST_ERR_MAX_PARAM_LENGTH":
      return new ApiError(
        "VALIDATION_ERROR",
        `path: a path parameter is longer than ${maxParamLength(request)} characters.`,
      );
  }
  const status = error.statusCode ?? 0;
  if (status === 404) return new ApiError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}.`);
  if (status === 413) return new ApiError("PAYLOAD_TOO_LARGE", "The request body is too large.");
  if (status === 503) return new ApiError("SERVICE_UNAVAILABLE", "The service cannot take the request right now; retry later.");
  if (status >= 400 && status < 500) {
    // Malformed JSON, an aborted body and similar request errors of Fastify's parser.
    return new ApiError("VALIDATION_ERROR", `body: ${typeof error.message === "string" ? error.message : "is invalid"}`);
  }
  return undefined;
}

/**
 * Turns anything a JSON HTTP route caught into the contract's error: errors
 * of the contract pass through, Fastify's own request errors get their
 * documented codes, anything else is logged under the request id and
 * answered INTERNAL_ERROR. Messages are bounded (src/transport/bounded-errors.ts).
 */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  const known = apiErrorFrom(error);
  if (known) return boundedApiError(known);
  const fastifyError = (typeof error === "object" && error !== null ? error : {}) as FastifyErrorLike;
  const requestError = fastifyRequestError(fastifyError, request);
  if (requestError) return requestError;
  request.log.error({ err: error, requestId: request.id }, "unexpected error while handling a request");
  return new ApiError("INTERNAL_ERROR", `An unexpected error occurred. Quote request id ${request.id} when contacting support.`);
}
