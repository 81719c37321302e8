import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalHandler, type UniversalServerRequest, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorFromJsonBytes, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { ValidationError } from "../../contract/api-error.ts";
import { boundedApiError } from "../bounded-errors.ts";

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
 * header lookup.
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
function decodeFailure(code: Code, message: string, hasDetails: boolean): ConnectError | undefined {
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

/** Connect unary: the error is the JSON body (one chunk) of a 4xx/5xx answer. */
async function rewriteConnect(response: UniversalServerResponse): Promise<UniversalServerResponse> {
  const body = response.body;
  if (response.status < 400 || !body || !response.header?.get("content-type")?.startsWith("application/json")) return response;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  let replacement: ConnectError | undefined;
  try {
    const error = errorFromJsonBytes(bytes, undefined, new ConnectError("", Code.Unknown));
    replacement = decodeFailure(error.code, error.rawMessage, error.details.length > 0);
  } catch {
    replacement = undefined;
  }
  if (!replacement) return { ...response, body: createAsyncIterable([bytes]) };
  const json = errorToJsonBytes(replacement, {});
  const header = new Headers(response.header);
  header.set("content-length", String(json.byteLength));
  return { ...response, status: codeToHttpStatus(replacement.code), header, body: createAsyncIterable([json]) };
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
  const wrapped = async (request: UniversalServerRequest) => rewrite(await handler(request));
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
