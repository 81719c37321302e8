import { connect, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendMessageRequestSchema } from "../../src/gen/mail/v1/mail_pb.js";
import { GOOD_KEY, startStubApi, type StubApi } from "./stub-api.ts";

/**
 * The direct path of unary gRPC calls (src/transport/connect/unary-grpc-fast-path.ts)
 * answers exactly as Connect's own gRPC handler does. A gzip-compressed
 * request is never taken by the direct path, so the same call sent once
 * plain (direct) and once compressed (Connect) must get the same headers,
 * trailers and message.
 */
interface Answer {
  readonly headers: Record<string, string>;
  readonly trailers: Record<string, string>;
  readonly body: Buffer;
}

/** Headers that differ per answer whatever the path. */
const VARYING = new Set(["date", "x-request-id"]);

function kept(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!VARYING.has(name) && value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

function frame(payload: Uint8Array, compressed: boolean): Buffer {
  const data = compressed ? gzipSync(payload) : Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(compressed ? 1 : 0, 0);
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

function call(baseUrl: string, path: string, payload: Uint8Array, compressed: boolean, headers: OutgoingHttpHeaders): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-accept-encoding": "gzip",
      ...(compressed ? { "grpc-encoding": "gzip" } : {}),
      ...headers,
    });
    let answerHeaders: Record<string, string> = {};
    let trailers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (answerHeaders = kept(h)));
    stream.on("trailers", (t) => (trailers = kept(t)));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      resolve({ headers: answerHeaders, trailers, body: Buffer.concat(chunks) });
    });
    stream.end(frame(payload, compressed));
  });
}

describe("the direct path of unary gRPC calls", () => {
  let api: StubApi;
  beforeAll(async () => {
    api = await startStubApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const send = toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      to: create(ValueSchema, { kind: { case: "stringValue", value: "someone@example.com" } }),
      subject: "Hello",
      html: "<p>Hi</p>",
    }),
  );
  const cases: [string, Uint8Array, OutgoingHttpHeaders][] = [
    ["an accepted send", send, { authorization: `Bearer ${GOOD_KEY}` }],
    ["an unknown key", send, { authorization: "Bearer tml_bad00000000000000000000000000000000000000" }],
    ["no key", send, {}],
    ["a request without its required fields", new Uint8Array(), { authorization: `Bearer ${GOOD_KEY}` }],
    ["an invalid grpc-timeout", send, { authorization: `Bearer ${GOOD_KEY}`, "grpc-timeout": "soon" }],
    ["a deadline", send, { authorization: `Bearer ${GOOD_KEY}`, "grpc-timeout": "5S" }],
  ];
  for (const [name, payload, headers] of cases) {
    it(`${name}: the same answer as Connect's handler`, async () => {
      const direct = await call(api.grpcUrl, "/mail.v1.MailService/SendMessage", payload, false, headers);
      const connect = await call(api.grpcUrl, "/mail.v1.MailService/SendMessage", payload, true, headers);
      expect(direct.headers[":status"]).toBe("200");
      expect(direct.trailers["grpc-status"]).toBeDefined();
      expect(direct).toEqual(connect);
    });
  }

  it("answers an accepted send with the message and the rate-limit headers", async () => {
    const answer = await call(api.grpcUrl, "/mail.v1.MailService/SendMessage", send, false, { authorization: `Bearer ${GOOD_KEY}` });
    expect(answer.trailers["grpc-status"]).toBe("0");
    expect(answer.headers["content-type"]).toBe("application/grpc+proto");
    expect(answer.headers["x-ratelimit-limit"]).toBeDefined();
    expect(answer.body.length).toBeGreaterThan(5);
  });
});
