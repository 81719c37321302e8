import { fromBinary, fromJson, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/contract/api-error.ts";
import {
  canonicalJson,
  idempotentRequestFingerprint,
  parseIdempotencyKey,
  readSendKey,
  requestFingerprint,
  SEND_MESSAGE_RPC,
  sendRequestFingerprint,
} from "../../../src/capabilities/idempotency/index.ts";
import { RecordConversionRequestSchema, SendMessageRequestSchema } from "../../../src/gen/mail/v1/mail_pb.js";

const SEND = "mail.v1.MailService/SendMessage";

function fingerprintOf(json: JsonObject, rpc = SEND): string {
  return requestFingerprint(rpc, SendMessageRequestSchema, fromJson(SendMessageRequestSchema, json)).toString("hex");
}

describe("canonicalJson", () => {
  it("sorts object keys at every depth, keeps array order and writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: "x" } })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
    expect(canonicalJson([2, 1])).toBe("[2,1]");
    expect(canonicalJson("é\n")).toBe('"é\\n"');
    expect(canonicalJson(null)).toBe("null");
  });
});

describe("requestFingerprint", () => {
  const body: JsonObject = {
    to: { email: "ada@example.com", name: "Ada" },
    subject: "Hello",
    html: "<p>Hi</p>",
    tags: { campaign: "welcome", tier: "gold" },
    variables: { first: "Ada", count: 3, nested: { b: 1, a: 2 } },
  };

  it("is a SHA-256 digest", () => {
    expect(fingerprintOf(body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("is the same whatever order the fields, map entries and object keys were written in", () => {
    const reordered: JsonObject = {
      variables: { nested: { a: 2, b: 1 }, count: 3, first: "Ada" },
      tags: { tier: "gold", campaign: "welcome" },
      html: "<p>Hi</p>",
      subject: "Hello",
      to: { name: "Ada", email: "ada@example.com" },
    };
    expect(fingerprintOf(reordered)).toBe(fingerprintOf(body));
  });

  it("is the same for the binary form of the same message (a gRPC caller and a REST caller agree)", () => {
    const message = fromJson(SendMessageRequestSchema, body);
    const decoded = fromBinary(SendMessageRequestSchema, toBinary(SendMessageRequestSchema, message));
    expect(requestFingerprint(SEND, SendMessageRequestSchema, decoded).toString("hex")).toBe(fingerprintOf(body));
  });

  it("differs for another value, another map entry, another array order or another RPC", () => {
    const base = fingerprintOf(body);
    expect(fingerprintOf({ ...body, subject: "Hello!" })).not.toBe(base);
    expect(fingerprintOf({ ...body, tags: { campaign: "welcome", tier: "silver" } })).not.toBe(base);
    expect(fingerprintOf({ ...body, variables: { list: [1, 2] } })).not.toBe(fingerprintOf({ ...body, variables: { list: [2, 1] } }));
    expect(fingerprintOf(body, "mail.v1.MailService/UpsertContact")).not.toBe(base);
  });

  it("tells an optional field sent empty from one not sent", () => {
    expect(fingerprintOf({ ...body, text: "" })).not.toBe(fingerprintOf(body));
  });
});

describe("parseIdempotencyKey", () => {
  function problem(raw: string): string {
    try {
      parseIdempotencyKey(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe("VALIDATION_ERROR");
      return (error as ApiError).message;
    }
    throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
  }

  it("is undefined when the header is absent", () => {
    expect(parseIdempotencyKey(null)).toBeUndefined();
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it("accepts 1 to 200 printable ASCII characters", () => {
    expect(parseIdempotencyKey("a")).toBe("a");
    expect(parseIdempotencyKey("order 42/retry:~!")).toBe("order 42/retry:~!");
    expect(parseIdempotencyKey("k".repeat(200))).toBe("k".repeat(200));
  });

  it("refuses an empty key, 201 characters and non-printable or non-ASCII characters, naming the header", () => {
    expect(problem("")).toMatch(/^Idempotency-Key: /);
    expect(problem("k".repeat(201))).toMatch(/^Idempotency-Key: .*200/);
    expect(problem("a\tb")).toMatch(/^Idempotency-Key: .*printable ASCII/);
    expect(problem("clé")).toMatch(/^Idempotency-Key: .*printable ASCII/);
  });
});

describe("idempotentRequestFingerprint", () => {
  const body: JsonObject = { to: "ada@example.com", subject: "Hello", html: "<p>Hi</p>" };
  const keyless = (json: JsonObject): string =>
    idempotentRequestFingerprint(SEND, SendMessageRequestSchema, fromJson(SendMessageRequestSchema, json)).toString("hex");

  it("ignores where the key was written: a body key, or none (the key in the header), is the same request", () => {
    expect(keyless({ ...body, idempotencyKey: "order-1" })).toBe(keyless(body));
    expect(keyless({ ...body, idempotencyKey: "order-2" })).toBe(keyless(body));
  });

  it("still tells another request apart", () => {
    expect(keyless({ ...body, subject: "Hello!", idempotencyKey: "order-1" })).not.toBe(keyless({ ...body, idempotencyKey: "order-1" }));
  });

  it("is requestFingerprint for a request without a body key field", () => {
    const conversion = fromJson(RecordConversionRequestSchema, { eventId: "e1", email: "ada@example.com", revenue: 49.95 });
    const rpc = "mail.v1.MailService/RecordConversion";
    expect(idempotentRequestFingerprint(rpc, RecordConversionRequestSchema, conversion)).toEqual(
      requestFingerprint(rpc, RecordConversionRequestSchema, conversion),
    );
  });

  it("is what sendRequestFingerprint keeps with a message", () => {
    const message = fromJson(SendMessageRequestSchema, { ...body, idempotencyKey: "order-1" });
    expect(SEND_MESSAGE_RPC).toBe(SEND);
    expect(sendRequestFingerprint(message).toString("hex")).toBe(keyless(body));
  });
});

describe("readSendKey: a send's key, read once at the door", () => {
  const problems = (header: string | null | undefined, bodyKey: string | undefined): string[] =>
    readSendKey(header, bodyKey).problems.map((p) => `${p.field}: ${p.problem}`);

  it("reads the header, the body key, or both when equal", () => {
    expect(readSendKey("order-1", undefined)).toEqual({ key: "order-1", problems: [] });
    expect(readSendKey(null, "order-1")).toEqual({ key: "order-1", problems: [] });
    expect(readSendKey("order-1", "order-1")).toEqual({ key: "order-1", problems: [] });
    expect(readSendKey(null, undefined)).toEqual({ problems: [] });
    expect(readSendKey(undefined, "é".repeat(160)).key).toBe("é".repeat(160));
  });

  it("a header and a body key that differ: no key, a problem naming idempotencyKey", () => {
    expect(readSendKey("order-1", "order-2").key).toBeUndefined();
    expect(problems("order-1", "order-2")).toEqual([expect.stringMatching(/^idempotencyKey: .*differs from the Idempotency-Key header/)]);
  });

  it("an invalid header or body key: no key, the problems for the send's one VALIDATION_ERROR", () => {
    expect(problems("k".repeat(201), undefined)).toEqual([expect.stringMatching(/^Idempotency-Key: .*200/)]);
    expect(problems("", undefined)).toEqual([expect.stringMatching(/^Idempotency-Key: /)]);
    expect(problems(undefined, "  ")).toEqual(["idempotencyKey: must not be empty"]);
    expect(problems(undefined, "k".repeat(161))).toEqual(["idempotencyKey: must be at most 160 characters"]);
    expect(problems(undefined, "k\u0000")).toEqual(["idempotencyKey: must not contain NUL characters"]);
    expect(problems("h".repeat(201), "")).toHaveLength(2);
    expect(readSendKey("k".repeat(201), "ok").key).toBeUndefined();
  });
});
