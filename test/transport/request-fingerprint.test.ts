import { fromBinary, fromJson, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { sendFingerprint } from "../../src/capabilities/messages/accept/send-fingerprint.ts";
import { RecordConversionRequestSchema, SendMessageRequestSchema } from "../../src/gen/mail/v1/mail_pb.js";
import { sendCommandOf } from "../../src/transport/connect/mail/mapping.ts";
import { idempotentRequestFingerprint, messageFingerprint } from "../../src/transport/connect/request-fingerprint.ts";

const SEND = "mail.v1.MailService/SendMessage";

function fingerprintOf(json: JsonObject, rpc = SEND): string {
  return messageFingerprint(rpc, SendMessageRequestSchema, fromJson(SendMessageRequestSchema, json)).toString("hex");
}

describe("messageFingerprint", () => {
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
    expect(messageFingerprint(SEND, SendMessageRequestSchema, decoded).toString("hex")).toBe(fingerprintOf(body));
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

  it("is messageFingerprint for a request without a body key field", () => {
    const conversion = fromJson(RecordConversionRequestSchema, { eventId: "e1", email: "ada@example.com", revenue: 49.95 });
    const rpc = "mail.v1.MailService/RecordConversion";
    expect(idempotentRequestFingerprint(rpc, RecordConversionRequestSchema, conversion)).toEqual(
      messageFingerprint(rpc, RecordConversionRequestSchema, conversion),
    );
  });

  it("is what the messages capability keeps with a keyed send (its fingerprint of the send command)", () => {
    const message = fromJson(SendMessageRequestSchema, { ...body, idempotencyKey: "order-1" });
    expect(sendFingerprint(sendCommandOf(message, { companyId: "c", keyId: "k", actor: { kind: "key" } }, null)).toString("hex")).toBe(keyless(body));
  });
});

