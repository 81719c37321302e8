import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { constants as h2, type Http2ServerRequest } from "node:http2";
import { type DescMethod, fromBinary, type JsonValue, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ConnectRouterOptions,
  createConnectRouter,
  createHandlerContext,
  type MethodImplSpec,
} from "@connectrpc/connect";
import { type Compression, compressionNegotiate, createAsyncIterable, invokeUnaryImplementation, type UniversalHandler } from "@connectrpc/connect/protocol";
import * as protoGrpc from "@connectrpc/connect/protocol-grpc";
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from "fastify";
import { registeredMethods } from "./registered-methods.ts";

/**
 * A direct path, in front of Connect's Fastify plugin
 * (@connectrpc/connect-fastify, which serves every route), for the common
 * gRPC call: a unary RPC over HTTP/2, one uncompressed protobuf message.
 *
 * Why: Connect's gRPC handler treats a unary call as a
 * stream. The request body goes through half a dozen async-iterable
 * transforms (split, decompress, parse the envelope, invoke, serialize,
 * compress, join, catch), the answer through as many more and a promise
 * per write, and the call's end aborts two AbortControllers without a
 * reason, which builds two DOMExceptions (with stack traces). Measured
 * with bench/hot-path/doors.ts (real listeners, stub capabilities), that
 * made a gRPC SendMessage cost the API process 3.5-5x the CPU of the same
 * call over the REST bridge, which already calls the handlers in process
 * (src/transport/rest/direct-transport.ts).
 *
 * The direct path reads the body into one buffer, decodes the single
 * envelope, and calls the implementation with invokeUnaryImplementation,
 * exactly as Connect's gRPC handler does for a unary method: the same
 * handler context (protocol "grpc", the request's headers, its grpc-timeout,
 * a signal aborted when the client resets the stream), the same
 * interceptors in the same order, the same response headers (content type
 * application/grpc+proto, grpc-encoding when a compression was negotiated)
 * and trailers (grpc-status 0, or the error's status, message, details and
 * metadata via Connect's own setTrailerStatus), the same compression rule
 * for the answer (negotiated from grpc-accept-encoding, applied from
 * 1 KiB). Headers, one DATA frame and trailers are handed to Node at once.
 *
 * Anything else goes on to the plugin's route, unchanged: other protocols
 * (Connect, gRPC-Web), gRPC+JSON, streaming methods, HTTP/1.1, a
 * compressed request (grpc-encoding other than identity), an invalid
 * grpc-timeout, and any body that is not exactly one uncompressed message
 * within readMaxBytes that decodes: the bytes already read are handed to
 * Connect as the body, so its answer (and refuseUndecodableRequests'
 * rewriting of decode failures) is what it always was.
 * test/transport/grpc-direct-path.test.ts holds the two paths to the same answers.
 *
 * It uses exports Connect marks private (invokeUnaryImplementation,
 * setTrailerStatus, parseTimeout, compressionNegotiate), as
 * undecodable-requests.ts already does: on a Connect upgrade, run that test
 * and compare with Connect's protocol-grpc/handler-factory.js.
 */
export type FastPathOptions = ConnectRouterOptions & {
  readonly routes: (router: ConnectRouter) => void;
  /** A method's own body limit, when the routes register it with one (src/transport/http/body-limits.ts); else readMaxBytes. */
  readonly readMaxBytesOf?: (method: DescMethod) => number;
};

/** Node's request headers are keyed in lower case; Connect's header constants are not. */
const GRPC_ENCODING = protoGrpc.headerEncoding.toLowerCase();
const GRPC_TIMEOUT = protoGrpc.headerTimeout.toLowerCase();
/** Connect's default for `compressMinBytes` (validateReadWriteMaxBytes): smaller answers are never compressed. */
const COMPRESS_MIN_BYTES = 1024;
/** Connect's default for `readMaxBytes`. */
const DEFAULT_READ_MAX_BYTES = 0xffffffff;
/** The reason a direct call's context is aborted with once it is over (an Error built once, not a DOMException per call). */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/**
 * A `preHandler` hook for the listener that serves the Connect routes with
 * @connectrpc/connect-fastify (register it on the parent instance, before
 * the plugin, with the plugin's own options). It takes the unary gRPC calls
 * it can serve directly and answers them itself; every other request goes
 * on to the plugin's route untouched. A call it took but whose body is not
 * one decodable message is answered by Connect's own handler for the
 * method, with the bytes already read.
 */
export function unaryGrpcFastPath(opts: FastPathOptions): preHandlerAsyncHookHandler {
  const options: ConnectRouterOptions = { ...opts, acceptCompression: opts.acceptCompression ?? [compressionGzip, compressionBrotli] };
  const router = createConnectRouter(options);
  opts.routes(router);
  const handlers = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));
  // The same implementations, as the direct path calls them (unary ones only).
  const unary = new Map<string, { spec: UnarySpec; handler: UniversalHandler; readMaxBytes: number | undefined }>();
  for (const [method, spec] of registeredMethods(opts.routes)) {
    const path = `/${method.parent.typeName}/${method.name}`;
    const handler = handlers.get(path);
    if (spec.kind === "unary" && handler) unary.set(path, { spec, handler, readMaxBytes: opts.readMaxBytesOf?.(method) });
  }
  const direct: DirectGrpcOptions = {
    interceptors: [...(options.interceptors ?? [])],
    acceptCompression: [...(options.acceptCompression ?? [])],
    readMaxBytes: options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES,
    compressMinBytes: options.compressMinBytes ?? COMPRESS_MIN_BYTES,
    maxTimeoutMs: options.maxTimeoutMs ?? Number.MAX_SAFE_INTEGER,
  };
  return async function unaryGrpcDirect(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!isDirectGrpc(req)) return;
    const target = unary.get(req.url);
    if (!target) return;
    // From here the answer is ours: Fastify runs no handler and sends nothing.
    reply.hijack();
    try {
      const options = target.readMaxBytes === undefined ? direct : { ...direct, readMaxBytes: target.readMaxBytes };
      await serveUnaryGrpc(target.spec, options, req, reply, (body) => serveWithConnect(target.handler, req, reply, body));
    } catch (e) {
      if (ConnectError.from(e).code === Code.Aborted) return;
      req.log.error({ err: e }, `handler for rpc ${target.spec.method.name} of ${target.spec.method.parent.typeName} failed`);
    }
  };
}

type UnarySpec = Extract<MethodImplSpec, { kind: "unary" }>;

/**
 * What connect-fastify does with every request. `body`: the bytes the direct
 * path already read, in place of the request stream; else Fastify's body
 * (undefined: the plugin's parsers leave every Connect content type unparsed).
 */
async function serveWithConnect(handler: UniversalHandler, req: FastifyRequest, reply: FastifyReply, body: AsyncIterable<Uint8Array>): Promise<void> {
  const request = universalRequestFromNodeRequest(req.raw, reply.raw, req.body as JsonValue | undefined, undefined);
  const uRes = await handler({ ...request, body });
  // Fastify keeps the reply's headers (the request id, cache-control...) until reply.send, which is not used here.
  copyReplyHeaders(reply);
  await universalResponseToNodeResponse(uRes, reply.raw);
}

function copyReplyHeaders(reply: FastifyReply): void {
  for (const [key, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(key, value);
  }
}

interface DirectGrpcOptions {
  readonly interceptors: NonNullable<ConnectRouterOptions["interceptors"]>;
  readonly acceptCompression: readonly Compression[];
  readonly readMaxBytes: number;
  readonly compressMinBytes: number;
  readonly maxTimeoutMs: number;
}

/** gRPC with a protobuf body over HTTP/2, POST, not compressed: the calls the direct path takes. */
function isDirectGrpc(req: FastifyRequest): boolean {
  const raw = req.raw;
  if (raw.httpVersionMajor !== 2 || raw.method !== "POST") return false;
  const type = raw.headers["content-type"];
  if (type !== "application/grpc" && type !== protoGrpc.contentTypeProto) return false;
  const encoding = raw.headers[GRPC_ENCODING];
  return encoding === undefined || encoding === "identity";
}

/** The request's headers as Connect hands them to a handler (nodeHeaderToWebHeader: no pseudo-headers). */
function requestHeaders(headers: IncomingHttpHeaders): Headers {
  const header = new Headers();
  for (const key in headers) {
    if (key.startsWith(":")) continue;
    const value = headers[key];
    if (value === undefined) continue;
    if (typeof value === "string") header.append(key, value);
    else for (const item of value) header.append(key, item);
  }
  return header;
}

/** A Headers object as Node's outgoing headers (webHeaderToNodeHeaders: repeated names become lists). */
function nodeHeaders(header: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  header.forEach((value, key) => {
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[key] = [String(existing), value];
  });
  return out;
}

/** Connect's reading of an HTTP/2 reset (connect-node's connectErrorFromH2ResetCode). */
function resetError(code: number): ConnectError | undefined {
  const message = `http/2 stream closed with error code 0x${code.toString(16)}`;
  switch (code) {
    case h2.NGHTTP2_PROTOCOL_ERROR:
    case h2.NGHTTP2_INTERNAL_ERROR:
    case h2.NGHTTP2_FLOW_CONTROL_ERROR:
    case h2.NGHTTP2_SETTINGS_TIMEOUT:
    case h2.NGHTTP2_FRAME_SIZE_ERROR:
    case h2.NGHTTP2_COMPRESSION_ERROR:
    case h2.NGHTTP2_CONNECT_ERROR:
      return new ConnectError(message, Code.Internal);
    case h2.NGHTTP2_REFUSED_STREAM:
      return new ConnectError(message, Code.Unavailable);
    case h2.NGHTTP2_CANCEL:
      return new ConnectError(message, Code.Canceled);
    case h2.NGHTTP2_ENHANCE_YOUR_CALM:
      return new ConnectError(message, Code.ResourceExhausted);
    case h2.NGHTTP2_INADEQUATE_SECURITY:
    case h2.NGHTTP2_HTTP_1_1_REQUIRED:
      return new ConnectError(message, Code.PermissionDenied);
    default:
      return undefined;
  }
}

/** The body as read: complete (`ended`), or cut short by an error, a close, or the size limit. */
interface ReadBody {
  readonly chunks: Buffer[];
  readonly length: number;
  readonly ended: boolean;
  readonly error?: unknown;
}

/** Reads the whole body, stopping (paused, the rest unread) once it is longer than `limit`. */
function readBody(raw: Http2ServerRequest, limit: number): Promise<ReadBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (ended: boolean, error?: unknown) => {
      raw.off("data", onData);
      raw.off("end", onEnd);
      raw.off("error", onError);
      raw.off("close", onClose);
      resolve(error === undefined ? { chunks, length, ended } : { chunks, length, ended, error });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length > limit) {
        raw.pause();
        finish(false);
      }
    };
    const onEnd = () => finish(true);
    const onError = (error: unknown) => finish(false, error);
    const onClose = () => finish(false);
    raw.on("data", onData);
    raw.once("end", onEnd);
    raw.once("error", onError);
    raw.once("close", onClose);
  });
}

/** What Connect reads as the body when the direct path hands a call over: the bytes read, then the rest as it comes. */
async function* replayed(raw: Http2ServerRequest, read: ReadBody): AsyncIterable<Uint8Array> {
  yield* read.chunks;
  if (read.error !== undefined) throw read.error;
  if (!read.ended) yield* raw as AsyncIterable<Uint8Array>;
}

async function serveUnaryGrpc(
  spec: UnarySpec,
  opt: DirectGrpcOptions,
  req: FastifyRequest,
  reply: FastifyReply,
  handOver: (body: AsyncIterable<Uint8Array>) => Promise<void>,
): Promise<void> {
  const raw = req.raw as unknown as Http2ServerRequest;
  const timeout = protoGrpc.parseTimeout((raw.headers[GRPC_TIMEOUT] as string | undefined) ?? null, opt.maxTimeoutMs);
  if (timeout.error) return handOver(raw as AsyncIterable<Uint8Array>);

  // One envelope: a flag byte, a 4-byte length, the message.
  const read = await readBody(raw, opt.readMaxBytes + 5);
  if (!read.ended) return handOver(replayed(raw, read));
  const body = read.chunks.length === 1 ? (read.chunks[0] as Buffer) : Buffer.concat(read.chunks, read.length);
  const size = body.length >= 5 ? body.readUInt32BE(1) : -1;
  if (body[0] !== 0 || size + 5 !== body.length || size > opt.readMaxBytes) return handOver(createAsyncIterable([body]));
  let input;
  try {
    input = fromBinary(spec.method.input, body.subarray(5));
  } catch {
    return handOver(createAsyncIterable([body]));
  }

  // The client resets the stream: the handler's signal says why, as with Connect (a plain abort otherwise).
  const abort = new AbortController();
  const onClose = () => {
    const error = resetError(raw.stream.rstCode);
    if (error) abort.abort(error);
    else abort.abort();
  };
  raw.once("close", onClose);
  const requestHeader = requestHeaders(raw.headers);
  const compression = compressionNegotiate([...opt.acceptCompression], null, requestHeader.get(protoGrpc.headerAcceptEncoding), protoGrpc.headerAcceptEncoding);
  const context = createHandlerContext({
    service: spec.method.parent,
    method: spec.method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: new URL(raw.url, `http://${raw.authority}`).toString(),
    // Whole milliseconds (rounded up): gRPC clients send the time left in micro- or nanoseconds
    // ("29999958u"), and a fractional setTimeout delay gives every call a timer list of its own in
    // Node (a new key, a priority-queue entry, both removed at the call's end): 7-10 % of a call's
    // CPU in bench/hot-path/doors.ts. Up to 1 ms later than asked, which the client's own deadline bounds.
    ...(timeout.timeoutMs !== undefined ? { timeoutMs: Math.ceil(timeout.timeoutMs) } : {}),
    requestSignal: abort.signal,
    requestHeader,
    responseHeader: {
      [protoGrpc.headerContentType]: protoGrpc.contentTypeProto,
      ...(compression.response ? { [protoGrpc.headerEncoding]: compression.response.name } : {}),
    },
    responseTrailer: { [protoGrpc.headerGrpcStatus]: protoGrpc.grpcStatusOk },
  });

  let envelope: Uint8Array | undefined;
  try {
    const output = await invokeUnaryImplementation(spec, context, input, opt.interceptors);
    let bytes: Uint8Array = toBinary(spec.method.output, output);
    let flags = 0;
    if (compression.response && bytes.byteLength >= opt.compressMinBytes) {
      bytes = await compression.response.compress(bytes);
      flags = 1;
    }
    envelope = new Uint8Array(5 + bytes.byteLength);
    envelope[0] = flags;
    new DataView(envelope.buffer).setUint32(1, bytes.byteLength);
    envelope.set(bytes, 5);
  } catch (e) {
    // As Connect's gRPC handler: no message, the error in the trailers.
    envelope = undefined;
    protoGrpc.setTrailerStatus(
      context.responseTrailer,
      e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e),
    );
  } finally {
    raw.off("close", onClose);
    context.abort(CALL_ENDED);
  }

  const res = reply.raw;
  copyReplyHeaders(reply);
  res.writeHead(200, nodeHeaders(context.responseHeader));
  res.addTrailers(nodeHeaders(context.responseTrailer));
  // Headers, the message and the trailers in one go (Connect awaits a write per chunk first).
  await new Promise<void>((resolve) => {
    res.once("finish", resolve);
    res.once("close", resolve);
    if (envelope) res.end(envelope);
    else res.end();
  });
}
