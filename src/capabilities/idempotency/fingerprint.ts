import { createHash } from "node:crypto";
import type { JsonValue } from "../shared/json.ts";

/**
 * JSON with the keys of every object sorted (by UTF-16 code units, as
 * Array.prototype.sort does) and no insignificant whitespace. Arrays keep
 * their order: it is meaningful. Members whose value is undefined are left
 * out, as JSON.stringify leaves them out.
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
 * a label naming the operation, a line feed, and the canonical JSON of what
 * was asked. Canonical, so that the order the caller wrote fields, map
 * entries and object keys in does not count (`{"a":"1","b":"2"}` and
 * `{"b":"2","a":"1"}` are the same request).
 */
export function requestFingerprint(label: string, request: JsonValue): Buffer {
  return createHash("sha256").update(label).update("\n").update(canonicalJson(request)).digest();
}
