import type { FastifyRequest } from "fastify";
import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";

interface FastifyErrorLike {
  code?: string;
  statusCode?: number;
  message?: string;
}

/**
 * Turns anything a JSON HTTP route caught into the contract's error: errors
 * of the contract pass through, Fastify's own request errors (body too
 * large, malformed JSON, wrong content type) get their documented codes,
 * anything else is logged under the request id and answered INTERNAL_ERROR.
 */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  const known = apiErrorFrom(error);
  if (known) return known;
  const fastifyError = (typeof error === "object" && error !== null ? error : {}) as FastifyErrorLike;
  switch (fastifyError.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("PAYLOAD_TOO_LARGE", `The request body is larger than ${request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit} bytes.`);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new ApiError("VALIDATION_ERROR", "body: send JSON with `Content-Type: application/json`.");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError("VALIDATION_ERROR", "body: is empty; send a JSON object.");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new ApiError("VALIDATION_ERROR", "body: is not valid JSON.");
  }
  if (fastifyError.statusCode === 400 && typeof fastifyError.message === "string") {
    // Malformed JSON and similar request errors detected by Fastify's parser.
    return new ApiError("VALIDATION_ERROR", `body: ${fastifyError.message}`);
  }
  if (fastifyError.statusCode === 413) {
    return new ApiError("PAYLOAD_TOO_LARGE", "The request body is too large.");
  }
  request.log.error({ err: error, requestId: request.id }, "unexpected error while handling a request");
  return new ApiError("INTERNAL_ERROR", `An unexpected error occurred. Quote request id ${request.id} when contacting support.`);
}
