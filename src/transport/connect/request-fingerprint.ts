import { type DescField, type DescMessage, type JsonObject, type MessageShape, ScalarType, toJson } from "@bufbuild/protobuf";
import { requestFingerprint } from "../../capabilities/idempotency/index.ts";

/**
 * The fingerprint of a request message for the idempotency records of
 * POSTs (capabilities/idempotency's requestFingerprint), labelled with the
 * RPC (`<service type name>/<method name>`) and taken of the message's JSON
 * form. Going through the decoded message (rather than the raw body) makes
 * a request sent as REST JSON, Connect JSON or protobuf binary the same
 * request; toJson writes fields in field order whatever order the caller
 * wrote them in, and the canonical JSON sorts the keys of maps and
 * google.protobuf.Struct, which keep the caller's order.
 */
export function messageFingerprint<Desc extends DescMessage>(rpc: string, schema: Desc, message: MessageShape<Desc>): Buffer {
  return requestFingerprint(rpc, toJson(schema, message) as JsonObject);
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
 * The fingerprint the idempotency rules compare: messageFingerprint() of
 * the request without its body key field. The key says which record to
 * compare with, not what was asked, so a request sent once with the key in
 * the header and retried with it in the body (or both) is the same request.
 */
export function idempotentRequestFingerprint<Desc extends DescMessage>(rpc: string, schema: Desc, message: MessageShape<Desc>): Buffer {
  const json = toJson(schema, message) as JsonObject;
  const field = bodyKeyField(schema);
  const keyless = field ? Object.fromEntries(Object.entries(json).filter(([name]) => name !== field.jsonName)) : json;
  return requestFingerprint(rpc, keyless);
}
