import type { DescMessage, JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, createContextKey, createContextValues } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalHandler, type UniversalServerRequest, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorFromJsonBytes, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { checkCanonicalJson } from "../../contract/json-codec.ts";
import { boundedApiError } from "../bounded-errors.ts";

/**
 * What a Connect JSON body named that the contract does not have (unknown
 * keys, unknown enum names), by JSON path: found while decoding, before any
 * interceptor (here), and answered by the contract validation after
 * authentication (connect/contract-validation-interceptor.ts), as the REST
 * bridge answers them.
 */
export const kUnknownJsonFields = createContextKey<readonly FieldProblem[]>([], { description: "fields a JSON body named that the contract lacks" });

/**
 * A request body that does not decode is the caller's mistake, answered
 * like every other one: 400 VALIDATION_ERROR (INVALID_ARGUMENT) naming
 * `body`, with the contract's ErrorInfo.
 *
 * Connect decodes the request before any interceptor runs, and answers a
 * protobuf message it cannot parse (bad wire format, invalid UTF-8 in a
 * string field) with INTERNAL, a compressed message without an encoding
 * with INTERNAL, a unary call with two messages or none with UNIMPLEMENTED,
 * and JSON it cannot parse with a bare INVALID_ARGUMENT: none of them in
 * the contract's shape, and INTERNAL tells a caller to retry what can never
 * succeed. This wraps the router's handlers and rewrites exactly those
 * answers (recognised by Connect's own messages, and by carrying no
 * ErrorInfo: an error of ours always has one), on every protocol: gRPC
 * (trailers), gRPC-Web (the trailer frame) and Connect (the JSON error).
 * Any other answer passes through untouched, so the happy path costs one
 * header lookup (and, for a Connect JSON body, keeping its chunks on the
 * way, for the case below).
 *
 * A Connect JSON body that decodes but for keys naming no field, enum
 * values by names the enum lacks (http/json-body.ts refuses both), or
 * bytes that are not base64 text (as the REST bridge's reader), is
 * answered like the REST bridge answers one: it is decoded again without
 * them and the call runs on, authentication and rate limit first, to the
 * contract validation, which answers 400 naming each of them by its JSON
 * path (kUnknownJsonFields). Nothing else runs: the handler never sees a
 * call whose body named an unknown field. (The health check and server
 * reflection, open and unvalidated, answer such a call as before, the
 * unknown keys ignored. JSON inside gRPC or gRPC-Web envelopes, which no
 * client of ours sends, keeps the `body` answer.)
 */
const DECODE_FAILURES: readonly RegExp[] = [
  /^parse binary: /,
  /^cannot decode /,
  /not valid for encoding utf-8/i,
  /^received compressed envelope, but do not know how to decompress/,
  /^protocol error: (?:received extra input message|missing input message|incomplete envelope|promised \d+ bytes)/,
];

const REWRITTEN_CODES: ReadonlySet<Code> = new Set([Code.Internal, Code.Unimplemented, Code.InvalidArgument, Code.Unknown]);

/** The contract's error for a decode failure Connect reported, or undefined when `error` is not one. */
export function decodeFailure(code: Code, message: string, hasDetails: boolean): ConnectError | undefined {
  if (hasDetails || !REWRITTEN_CODES.has(code) || !DECODE_FAILURES.some((pattern) => pattern.test(message))) return undefined;
  const problem = `is not a valid request message (${message.replace(/^parse binary: /, "")})`;
  return boundedApiError(new ValidationError([{ field: "body", problem }])).toConnectError();
}

/** gRPC: the status is in the trailers, set by the time the handler resolves (a unary request is decoded first). */
function rewriteGrpc(response: UniversalServerResponse): void {
  const trailer = response.trailer;
  const status = trailer?.get("grpc-status");
  if (!trailer || status === null || status === undefined || status === "0") return;
  const replacement = decodeFailure(Number(status) as Code, decodeURIComponent(trailer.get("grpc-message") ?? ""), trailer.has("grpc-status-details-bin"));
  if (replacement) setTrailerStatus(trailer, replacement);
}

/** gRPC-Web: the trailers are the last frame of the body. */
function rewriteGrpcWebFrame(chunk: Uint8Array): Uint8Array {
  // One uncompressed trailer frame: flag byte, 4-byte length, the trailer block.
  if (chunk.length < 5 || chunk[0] !== trailerFlag) return chunk;
  const length = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength).getUint32(1);
  if (length !== chunk.length - 5) return chunk;
  const trailer = trailerParse(chunk.subarray(5));
  const status = trailer.get("grpc-status");
  if (status === null || status === "0") return chunk;
  const replacement = decodeFailure(Number(status) as Code, decodeURIComponent(trailer.get("grpc-message") ?? ""), trailer.has("grpc-status-details-bin"));
  if (!replacement) return chunk;
  setTrailerStatus(trailer, replacement);
  const block = trailerSerialize(trailer);
  const frame = new Uint8Array(5 + block.length);
  frame[0] = trailerFlag;
  new DataView(frame.buffer).setUint32(1, block.length);
  frame.set(block, 5);
  return frame;
}

async function* rewriteGrpcWebBody(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const chunk of body) yield rewriteGrpcWebFrame(chunk);
}

/** A Connect unary answer, its body read when it is an error (the JSON body, one chunk, of a 4xx/5xx answer). */
interface ConnectAnswer {
  readonly response: UniversalServerResponse;
  readonly error?: ConnectError;
}

async function readConnectAnswer(response: UniversalServerResponse): Promise<ConnectAnswer> {
  const body = response.body;
  if (response.status < 400 || !body || !response.header?.get("content-type")?.startsWith("application/json")) return { response };
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const read = { ...response, body: createAsyncIterable([bytes]) };
  try {
    return { response: read, error: errorFromJsonBytes(bytes, undefined, new ConnectError("", Code.Unknown)) };
  } catch {
    return { response: read };
  }
}

function answerConnect({ response, error }: ConnectAnswer): UniversalServerResponse {
  const replacement = error && decodeFailure(error.code, error.rawMessage, error.details.length > 0);
  if (!replacement) return response;
  const json = errorToJsonBytes(replacement, {});
  const header = new Headers(response.header);
  header.set("content-length", String(json.byteLength));
  return { ...response, status: codeToHttpStatus(replacement.code), header, body: createAsyncIterable([json]) };
}

async function rewriteConnect(response: UniversalServerResponse): Promise<UniversalServerResponse> {
  return answerConnect(await readConnectAnswer(response));
}

/** How protobuf-es words a key naming no field, and an enum value by a name the enum lacks. */
const NAMED_REFUSALS: readonly RegExp[] = [
  /^cannot decode message \S+ from JSON: key .* is unknown$/s,
  /^cannot decode enum \S+ from JSON: /,
  /^cannot decode field \S+ from JSON: invalid base64 string$/,
];

/** A Connect unary call with a JSON body (the protocol the screen and Connect clients use). */
function isConnectJson(request: UniversalServerRequest): boolean {
  return request.method === "POST" && /^application\/json(?:;|$)/i.test(request.header.get("content-type") ?? "");
}

function isByteStream(body: UniversalServerRequest["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/** The body as Connect reads it, its chunks kept in `chunks` on the way. */
async function* recorded(body: AsyncIterable<Uint8Array>, chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    chunks.push(chunk);
    yield chunk;
  }
}

/**
 * The request again, without the keys and enum names its JSON body named
 * that `input` lacks, and with those named for the contract validation; or
 * undefined when the body named none (or cannot be read again).
 */
function withoutUnknownFields(request: UniversalServerRequest, input: DescMessage, body: JsonValue | undefined): UniversalServerRequest | undefined {
  if (body === undefined) return undefined;
  const { problems, known } = checkCanonicalJson(input, body);
  if (problems.length === 0) return undefined;
  const contextValues = request.contextValues ?? createContextValues();
  contextValues.set(kUnknownJsonFields, problems);
  const bytes = new TextEncoder().encode(JSON.stringify(known));
  const header = new Headers(request.header);
  if (header.has("content-length")) header.set("content-length", String(bytes.byteLength));
  return { ...request, header, body: createAsyncIterable([bytes]), contextValues };
}

function parsedJson(chunks: readonly Uint8Array[]): JsonValue | undefined {
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as JsonValue;
  } catch {
    return undefined;
  }
}

/** Connect's refusal of a key or an enum name (no ErrorInfo: not an error of ours). */
function refusedByName(error: ConnectError | undefined): boolean {
  return error !== undefined && error.details.length === 0 && NAMED_REFUSALS.some((pattern) => pattern.test(error.rawMessage));
}

/** A Connect JSON call: refused by name (unknown keys, enum names) after authentication, or answered as any other. */
async function serveConnectJson(handler: UniversalHandler, request: UniversalServerRequest): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  const body = request.body;
  const stream = isByteStream(body);
  const first = await readConnectAnswer(await handler(stream ? { ...request, body: recorded(body, chunks) } : request));
  if (!refusedByName(first.error)) return answerConnect(first);
  const again = withoutUnknownFields(request, handler.method.input, stream ? parsedJson(chunks) : body);
  return again ? rewrite(await handler(again)) : answerConnect(first);
}

async function rewrite(response: UniversalServerResponse): Promise<UniversalServerResponse> {
  const contentType = response.header?.get("content-type") ?? "";
  if (contentType.startsWith("application/grpc-web")) {
    return response.body ? { ...response, body: rewriteGrpcWebBody(response.body) } : response;
  }
  if (contentType.startsWith("application/grpc")) {
    rewriteGrpc(response);
    return response;
  }
  return rewriteConnect(response);
}

function refusing(handler: UniversalHandler): UniversalHandler {
  const wrapped = async (request: UniversalServerRequest) =>
    isConnectJson(request) ? serveConnectJson(handler, request) : rewrite(await handler(request));
  return Object.assign(wrapped, {
    requestPath: handler.requestPath,
    method: handler.method,
    service: handler.service,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  });
}

/** `routes`, with every handler it registers answering undecodable requests in the contract's shape. */
export function refuseUndecodableRequests(routes: (router: ConnectRouter) => void): (router: ConnectRouter) => void {
  return (router) => {
    routes(router);
    const handlers = router.handlers;
    for (let i = 0; i < handlers.length; i++) {
      const handler = handlers[i];
      if (handler) handlers[i] = refusing(handler);
    }
  };
}
