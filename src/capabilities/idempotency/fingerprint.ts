import { createHash } from "node:crypto";
import { type DescMessage, type JsonValue, type MessageShape, toJson } from "@bufbuild/protobuf";

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
  const json = toJson(schema, message) as JsonValue;
  return createHash("sha256").update(rpc).update("\n").update(canonicalJson(json)).digest();
}
