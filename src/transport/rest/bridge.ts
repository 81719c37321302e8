import type { DescMessage, DescMethod, DescService, JsonObject, MessageShape } from "@bufbuild/protobuf";
import { type CallOptions, type Transport, createClient, createContextValues } from "@connectrpc/connect";
import { kBridgedHttpMethod } from "./direct-transport.ts";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { messageFromPublicJson, messageToPublicJson } from "../../contract/json-codec.ts";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  IDEMPOTENT_REDACTED_HEADER,
  RATE_LIMIT_HEADERS,
  REQUEST_ID_HEADER,
  RETRY_AFTER_HEADER,
} from "../../contract/names.ts";
import { type HttpBinding, type OperationSpec, operationsOf } from "../../contract/routes.ts";
import { boundedApiError } from "../bounded-errors.ts";
import type { Authorize } from "../connect/auth-interceptor.ts";
import { sendApiError } from "../http/error-reply.ts";
import { CLIENT_ADDRESS_HEADER, REQUEST_ORIGIN_HEADER } from "../http/request-context.ts";
import { toApiError } from "../http/to-api-error.ts";

/**
 * The REST bridge: a generic transcoder from JSON HTTP to the RPCs, driven
 * by the `google.api.http` annotations of the contract. It builds the request
 * message from the path, the query string and the body, calls the RPC
 * through an in-process Connect transport (so authentication, rate limits,
 * idempotency and error mapping are exactly those of gRPC and Connect
 * callers), and renders the answer in the public JSON form.
 *
 * Authentication comes first, as on gRPC: a request the bridge refuses
 * before calling the RPC (malformed JSON, a wrong content type, an invalid
 * field) is first authorized like the call it stands for, so a caller
 * without a valid key learns only that (401), and an authenticated one gets
 * the 400 with the rate-limit headers of every authenticated answer.
 */
export interface RestBridgeOptions {
  readonly service: DescService;
  /** In-process transport to the same routes and interceptors. */
  readonly transport: Transport;
  /** The authorization the RPCs run (src/transport/connect/auth-interceptor.ts). */
  readonly authorize: Authorize;
  /** A route's body limit when it is not the listener's (src/transport/http/body-limits.ts). */
  readonly bodyLimitOf?: (method: DescMethod) => number;
}

/** Request headers the bridge passes on to the RPC. */
const FORWARDED_REQUEST_HEADERS = [
  "authorization",
  IDEMPOTENCY_KEY_HEADER,
  REQUEST_ID_HEADER,
  CLIENT_ADDRESS_HEADER,
  "user-agent",
  // A member session and what its browser rules check: Origin against Host, the Connect protocol header.
  "cookie",
  "origin",
  REQUEST_ORIGIN_HEADER,
  "connect-protocol-version",
];
/** Response headers of the RPC that the bridge passes back. */
const RETURNED_RESPONSE_HEADERS = [...RATE_LIMIT_HEADERS, RETRY_AFTER_HEADER, IDEMPOTENT_REPLAYED_HEADER, IDEMPOTENT_REDACTED_HEADER];

type UnaryCall = (request: MessageShape<DescMessage>, options: CallOptions) => Promise<MessageShape<DescMessage>>;

function fastifyPath(template: string): string {
  return template.replace(/\{([a-z_][a-z0-9_]*)\}/g, ":$1");
}

function jsonNameOf(method: DescMethod, protoName: string): string {
  const field = method.input.fields.find((f) => f.name === protoName);
  if (!field) throw new Error(`contract: ${method.name} binds unknown field ${protoName}`);
  return field.jsonName;
}

/** Assembles the public-JSON request object from path, query and body. */
function requestJson(method: DescMethod, binding: HttpBinding, request: FastifyRequest): JsonObject {
  const input: JsonObject = {};
  const query = (request.query ?? {}) as Record<string, string | string[]>;
  const body = request.body;

  if (binding.body === "*") {
    if (body !== undefined && body !== null) {
      if (typeof body !== "object" || Array.isArray(body)) {
        throw new ValidationError([{ field: "body", problem: "must be a JSON object" }]);
      }
      Object.assign(input, body);
    }
    const unexpected = Object.keys(query);
    if (unexpected.length > 0) {
      throw new ValidationError(unexpected.map((name) => ({ field: name, problem: "is not a query parameter of this route" })));
    }
  } else {
    if (binding.body) input[jsonNameOf(method, binding.body)] = (body ?? null) as JsonObject;
    Object.assign(input, query);
  }

  const params = (request.params ?? {}) as Record<string, string>;
  for (const name of binding.pathParams) {
    const value = params[name];
    if (value !== undefined) input[jsonNameOf(method, name)] = value;
  }
  return input;
}

function forwardedHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = request.headers[name];
    if (typeof value === "string") headers.set(name, value);
  }
  return headers;
}

function renderResponse(method: DescMethod, binding: HttpBinding, response: MessageShape<DescMessage>): JsonObject | null {
  if (!binding.responseBody) return messageToPublicJson(method.output, response);
  const field = method.output.fields.find((f) => f.name === binding.responseBody);
  if (!field || field.fieldKind !== "message") {
    throw new Error(`contract: ${method.name} response_body must name a message field`);
  }
  const value = (response as unknown as Record<string, unknown>)[field.localName];
  return value === undefined ? null : messageToPublicJson(field.message, value as MessageShape<DescMessage>);
}

/**
 * Answers a request refused before its RPC was called: authorized first (a
 * refusal of the authorization wins), then the request's own error with the
 * authorization's headers.
 */
async function refuseRequest(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  method: DescMethod,
  authorize: Authorize,
): Promise<FastifyReply> {
  const apiError = toApiError(error, request);
  if (apiError.httpStatus >= 500) return sendApiError(reply, apiError);
  let headers: Readonly<Record<string, string>>;
  try {
    ({ headers } = await authorize(method, forwardedHeaders(request), request.method));
  } catch (authError) {
    return sendApiError(reply, toApiError(authError, request));
  }
  return sendApiError(reply, boundedApiError(apiError, headers));
}

function route(app: FastifyInstance, op: OperationSpec, call: UnaryCall, authorize: Authorize, bodyLimit: number | undefined): void {
  const binding = op.http;
  if (!binding) return;
  const { method } = op;
  app.route({
    method: binding.verb.toUpperCase() as "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    url: fastifyPath(binding.pathTemplate),
    ...(bodyLimit !== undefined ? { bodyLimit } : {}),
    // Fastify's own body errors (malformed JSON, content type, size) land here.
    errorHandler: (error, request, reply) => refuseRequest(error, request, reply, method, authorize),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      let message: MessageShape<DescMessage>;
      try {
        const source = binding.verb === "get" || binding.verb === "delete" ? "query" : "body";
        message = messageFromPublicJson(method.input, requestJson(method, binding, request), source);
      } catch (error) {
        return refuseRequest(error, request, reply, method, authorize);
      }
      let responseHeaders: Headers | undefined;
      try {
        const response = await call(message, {
          headers: forwardedHeaders(request),
          contextValues: createContextValues().set(kBridgedHttpMethod, request.method),
          onHeader: (headers) => {
            responseHeaders = headers;
          },
          signal: AbortSignal.timeout(30_000),
        });
        for (const name of RETURNED_RESPONSE_HEADERS) {
          const value = responseHeaders?.get(name);
          if (value) reply.header(name, value);
        }
        return reply.code(op.successStatus).type("application/json").send(renderResponse(method, binding, response));
      } catch (error) {
        const apiError: ApiError = toApiError(error, request);
        return sendApiError(reply, apiError);
      }
    },
  });
}

export async function restBridge(app: FastifyInstance, options: RestBridgeOptions): Promise<void> {
  const client = createClient(options.service, options.transport) as unknown as Record<string, UnaryCall>;
  for (const op of operationsOf(options.service)) {
    const call = client[op.method.localName];
    if (!call) throw new Error(`no client method for ${op.method.name}`);
    route(app, op, call.bind(client), options.authorize, options.bodyLimitOf?.(op.method));
  }
}
