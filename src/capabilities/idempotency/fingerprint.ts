import { createHash } from "node:crypto";
import { type DescField, type DescMessage, type JsonObject, type JsonValue, type MessageShape, ScalarType, toJson } from "@bufbuild/protobuf";
import { MailService, type SendMessageRequest, SendMessageRequestSchema } from "../../gen/mail/v1/mail_pb.js";

/**
 * JSON with the keys of every object sorted (by UTF-16 code units, as
 * Array.prototype.sort does) and no insignificant whitespace. Arrays keep
 * their order: it is meaningful.
 */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const members: string[] = [];
  for (const name of Object.keys(value).sort()) {
    const member = value[name];
    if (member !== undefined) members.push(`${JSON.stringify(name)}:${canonicalJson(member)}`);
  }
  return `{${members.join(",")}}`;
}

/**
 * What makes two requests "the same request" for idempotency: SHA-256 of
 * the RPC name and the canonical JSON of the request message.
 *
 * Fields of a message are written in field order by toJson whatever order
 * the caller wrote them in, but map fields and google.protobuf.Struct keep
 * the caller's insertion order; sorting the keys makes
 * `{"tags":{"a":"1","b":"2"}}` and `{"tags":{"b":"2","a":"1"}}` the same
 * request. Going through the decoded message (rather than the raw body)
 * also makes a request sent as REST JSON, Connect JSON or protobuf binary
 * the same request.
 */
export function requestFingerprint<Desc extends DescMessage>(rpc: string, schema: Desc, message: MessageShape<Desc>): Buffer {
  return fingerprintOfJson(rpc, toJson(schema, message) as JsonValue);
}

function fingerprintOfJson(rpc: string, json: JsonValue): Buffer {
  return createHash("sha256").update(rpc).update("\n").update(canonicalJson(json)).digest();
}

/** Proto name of the request field that may carry the key instead of the header. */
const BODY_KEY_FIELD = "idempotency_key";

/**
 * The string field of a request message that may carry the idempotency key
 * in the body (SendMessageRequest.idempotency_key: "may be sent in the
 * `Idempotency-Key` header instead"); undefined for requests without one.
 */
export function bodyKeyField(schema: DescMessage): DescField | undefined {
  const field = schema.fields.find((f) => f.name === BODY_KEY_FIELD);
  return field?.fieldKind === "scalar" && field.scalar === ScalarType.STRING ? field : undefined;
}

/**
 * The fingerprint the idempotency rules compare: requestFingerprint() of
 * the request without its body key field. The key says which record to
 * compare with, not what was asked, so a request sent once with the key in
 * the header and retried with it in the body (or both) is the same request.
 */
export function idempotentRequestFingerprint<Desc extends DescMessage>(rpc: string, schema: Desc, message: MessageShape<Desc>): Buffer {
  const json = toJson(schema, message) as JsonObject;
  const field = bodyKeyField(schema);
  const keyless = field ? Object.fromEntries(Object.entries(json).filter(([name]) => name !== field.jsonName)) : json;
  return fingerprintOfJson(rpc, keyless);
}

/** `<service type name>/<method name>` of SendMessage, as the transport names RPCs. */
export const SEND_MESSAGE_RPC = `${MailService.typeName}/${MailService.method.sendMessage.name}`;

/**
 * The fingerprint of a send (POST /mail/v1/send), the same value the
 * per-API-key records hold for it. The message keeps it with its key: the
 * key names the message for the whole company (spec, Idempotency rule 4),
 * so a later send with the key is the original message only when it asks
 * for the same thing.
 */
export function sendRequestFingerprint(request: SendMessageRequest): Buffer {
  return idempotentRequestFingerprint(SEND_MESSAGE_RPC, SendMessageRequestSchema, request);
}
