import { connect, constants, type OutgoingHttpHeaders } from "node:http2";
import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../../src/gen/google/rpc/status_pb.js";

/**
 * A gRPC call written byte by byte on an h2c stream, for what no gRPC
 * client sends: bodies that are not protobuf, frames that lie about their
 * length, compressed flags without compression. Answers the status from the
 * trailers (or the headers, for a trailers-only answer) with the contract's
 * reason from `grpc-status-details-bin`.
 */
export interface RawGrpcAnswer {
  readonly httpStatus: number;
  readonly grpcStatus: number | undefined;
  readonly grpcMessage: string;
  /** The google.rpc.ErrorInfo reason of domain mail.v1, if any. */
  readonly reason: string | undefined;
  /** Response message bytes (without the 5-byte envelope). */
  readonly body: Buffer;
}

/** One length-prefixed gRPC message: flag byte, 4-byte big-endian length, payload. */
export function grpcFrame(payload: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/**
 * `untilFirstMessage`: a server stream that opened is cancelled once its
 * first message is in (the answer then has no status): it would otherwise
 * stay open for as long as the service keeps it.
 */
export function rawGrpc(baseUrl: string, path: string, body: Buffer, headers: OutgoingHttpHeaders = {}, untilFirstMessage = false): Promise<RawGrpcAnswer> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers });
    let httpStatus = 0;
    const fields: Record<string, string> = {};
    const chunks: Buffer[] = [];
    const take = (h: Record<string, unknown>) => {
      for (const [name, value] of Object.entries(h)) if (typeof value === "string") fields[name] = value;
    };
    stream.on("response", (h) => {
      httpStatus = Number(h[":status"]);
      take(h);
    });
    stream.on("trailers", take);
    stream.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (untilFirstMessage && Buffer.concat(chunks).length >= 5) stream.close(constants.NGHTTP2_CANCEL);
    });
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      const details = fields["grpc-status-details-bin"];
      let reason: string | undefined;
      if (details) {
        const status = fromBinary(StatusSchema, Buffer.from(details, "base64"));
        reason = status.details.map((any) => anyUnpack(any, ErrorInfoSchema)).find((info) => info?.domain === "mail.v1")?.reason;
      }
      const raw = Buffer.concat(chunks);
      resolve({
        httpStatus,
        grpcStatus: fields["grpc-status"] === undefined ? undefined : Number(fields["grpc-status"]),
        grpcMessage: decodeURIComponent(fields["grpc-message"] ?? ""),
        reason,
        body: raw.length >= 5 ? raw.subarray(5) : raw,
      });
    });
    stream.end(body);
  });
}
