import { type DescField, type DescMessage, type JsonValue, ScalarType } from "@bufbuild/protobuf";
import fc from "fast-check";
import { enumJsonValues } from "../../../src/contract/json-codec.ts";

/**
 * fast-check arbitraries for hostile requests, derived from the request
 * descriptors so that every field of every request schema is covered and a
 * new field is covered the day it is added.
 */

/** Text that has broken services before: controls, line breaks, markup, template syntax, odd Unicode, lengths. */
const NASTY_TEXT: readonly string[] = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\r\n",
  "Name\r\nBcc: victim@evil.example",
  "Subject\nX-Injected: 1",
  "{{ name }}",
  "{{ name | default:{{ secret }} }}",
  "{{{ raw }}}",
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "' OR '1'='1' --",
  "\"; drop table message; --",
  "%00",
  "%2e%2e%2f",
  "../../etc/passwd",
  "\\",
  "\u202eevil",
  "\ufeff",
  "\u200b",
  "ｆｕｌｌｗｉｄｔｈ",
  "😀👍🏽",
  "e\u0301",
  "\u0085\u2028\u2029",
  "\x7f",
  "null",
  "undefined",
  "NaN",
  "-1",
  "1e309",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "x".repeat(101),
  "x".repeat(513),
  "y".repeat(5_000),
  "a@b",
  "a@b.example",
  "Ab@Customers.Example",
  "a@xn--bcher-kva.example",
  "a@bücher.example",
  "https://hooks.hostile.example/x",
  "javascript:alert(1)",
  "__proto__",
  "constructor",
  "toString",
  "$where",
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_TEXT) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.emailAddress() },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NASTY_TEXT), fc.string({ maxLength: 10 })).map(([a, b]) => a + b) },
);

/**
 * Strings with unpaired surrogates: valid in JSON (`"\ud800"`), not Unicode
 * text. A gRPC client cannot even send them (its encoder replaces them).
 */
export const unpairedSurrogate: fc.Arbitrary<string> = fc.constantFrom("\ud800", "a\udfffb", "\udc00\ud800");

/** Text holding the NUL character, which PostgreSQL text and jsonb cannot store. */
export const withNul: fc.Arbitrary<string> = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}\u0000${b}`);

/** Any JSON value, nested a little, with hostile strings and numbers. */
export const hostileJson: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    hostileNumber(),
    hostileString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileString, tie("value"), { maxKeys: 4 }),
  ),
})).value;

function hostileNumber(): fc.Arbitrary<number> {
  return fc.oneof(
    fc.integer(),
    fc.constantFrom(0, -0, -1, 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e21, 1e308, -1e308, 5e-324, 0.1),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );
}

/** ISO 8601 text: valid instants, the edges of the range, and near misses. */
const timestampText: fc.Arbitrary<string> = fc.oneof(
  fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    "2026-01-31T12:00:00Z",
    "2026-01-31T12:00:00.123456789+02:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "0000-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-01-31T25:61:61Z",
    "2026-01-31",
    "2026-01-31T12:00:00",
    "yesterday",
    "1e10",
    "",
  ),
);

function scalarJson(type: ScalarType): fc.Arbitrary<JsonValue> {
  switch (type) {
    case ScalarType.STRING:
      return hostileString;
    case ScalarType.BOOL:
      return fc.oneof(fc.boolean(), fc.constantFrom<JsonValue>("true", "false", 0, 1, "yes"));
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.oneof(hostileNumber(), fc.constantFrom<JsonValue>("NaN", "Infinity", "-Infinity", "1.5"));
    case ScalarType.BYTES:
      return fc.oneof(fc.base64String({ maxLength: 40 }), hostileString);
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return fc.oneof(
        hostileNumber(),
        fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => n.toString()),
        fc.constantFrom<JsonValue>("9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "1.5", "0x10"),
      );
    default:
      return fc.oneof(hostileNumber(), fc.integer().map(String), fc.constantFrom<JsonValue>("4294967296", "-2147483649", "1.0", "1e3", " 1"));
  }
}

function messageJson(desc: DescMessage, depth: number): fc.Arbitrary<JsonValue> {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return timestampText;
    case "google.protobuf.Struct":
      return fc.dictionary(hostileString, hostileJson, { maxKeys: 5 });
    case "google.protobuf.Value":
    case "google.protobuf.ListValue":
      return hostileJson;
  }
  if (depth > 2) return fc.constant({});
  return jsonObjectOf(desc, [], depth + 1);
}

/** A JSON value for `field` of the right shape, with hostile contents. */
export function fieldJson(field: DescField, depth = 0): fc.Arbitrary<JsonValue> {
  switch (field.fieldKind) {
    case "scalar":
      return scalarJson(field.scalar);
    case "enum":
      return fc.oneof(fc.constantFrom<JsonValue>(...enumJsonValues(field.enum)), fc.constantFrom<JsonValue>("", "UNSPECIFIED", "unspecified", 0, 1, 99), hostileString);
    case "message":
      return messageJson(field.message, depth);
    case "list": {
      const item =
        field.listKind === "scalar" ? scalarJson(field.scalar) : field.listKind === "enum" ? fc.constantFrom<JsonValue>(...enumJsonValues(field.enum), "nope") : messageJson(field.message, depth);
      return fc.array(item, { maxLength: 6 });
    }
    case "map": {
      const value =
        field.mapKind === "scalar" ? scalarJson(field.scalar) : field.mapKind === "enum" ? fc.constantFrom<JsonValue>(...enumJsonValues(field.enum)) : messageJson(field.message, depth);
      return fc.dictionary(hostileString, value, { maxKeys: 5 });
    }
  }
}

/**
 * A JSON object for `desc` (minus `skip`): each field left out, of the right
 * shape with hostile contents, or of any shape at all; sometimes with keys
 * the schema does not have.
 */
export function jsonObjectOf(desc: DescMessage, skip: readonly string[] = [], depth = 0): fc.Arbitrary<Record<string, JsonValue>> {
  const fields = desc.fields.filter((f) => !skip.includes(f.name));
  const entries = fields.map((field) =>
    fc.option(fc.oneof({ weight: 4, arbitrary: fieldJson(field, depth) }, { weight: 1, arbitrary: hostileJson }), { freq: 2, nil: undefined }).map((value) => [field.jsonName, value] as const),
  );
  return fc.tuple(fc.tuple(...entries), fc.option(fc.dictionary(hostileString, hostileJson, { maxKeys: 2 }), { freq: 4, nil: undefined })).map(([pairs, extra]) => {
    const out: Record<string, JsonValue> = {};
    for (const [key, value] of pairs) if (value !== undefined) out[key] = value;
    if (extra) for (const [key, value] of Object.entries(extra)) if (!(key in out)) out[key] = value;
    return out;
  });
}

/**
 * A mutation of a valid body: some fields replaced (right shape, hostile
 * contents, or any JSON), removed, or joined by unknown keys. Starting from
 * a valid body makes the service go deep (past the first missing field).
 */
export function mutatedJson(desc: DescMessage, seed: Readonly<Record<string, JsonValue>>, skip: readonly string[] = []): fc.Arbitrary<Record<string, JsonValue>> {
  return fc.tuple(jsonObjectOf(desc, skip), fc.subarray(Object.keys(seed)), fc.boolean()).map(([generated, removed, keepSeed]) => {
    const kept = keepSeed ? Object.entries(seed).filter(([key]) => !removed.includes(key)) : [];
    return { ...Object.fromEntries(kept), ...generated };
  });
}

// ---------------------------------------------------------------- protobuf (gRPC)

type ProtoValue = unknown;

const INT_RANGES: Partial<Record<ScalarType, [number, number]>> = {
  [ScalarType.INT32]: [-(2 ** 31), 2 ** 31 - 1],
  [ScalarType.SINT32]: [-(2 ** 31), 2 ** 31 - 1],
  [ScalarType.SFIXED32]: [-(2 ** 31), 2 ** 31 - 1],
  [ScalarType.UINT32]: [0, 2 ** 32 - 1],
  [ScalarType.FIXED32]: [0, 2 ** 32 - 1],
};

function scalarProto(type: ScalarType): fc.Arbitrary<ProtoValue> {
  switch (type) {
    case ScalarType.STRING:
      return hostileString;
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.double();
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 40 });
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(0n, -1n, 1n, 2n ** 63n - 1n, -(2n ** 63n)));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
    default: {
      const [min, max] = INT_RANGES[type] ?? [-(2 ** 31), 2 ** 31 - 1];
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max, 0, -1 >= min ? -1 : 0));
    }
  }
}

/** Timestamps a gRPC client can put on the wire: far outside the range JSON allows, negative nanos. */
const timestampProto = fc.oneof(
  fc.record({ seconds: fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n }), nanos: fc.integer({ min: -(10 ** 9), max: 2 * 10 ** 9 }) }),
  fc.date({ noInvalidDate: true }).map((d) => ({ seconds: BigInt(Math.floor(d.getTime() / 1000)), nanos: (d.getTime() % 1000) * 1_000_000 })),
);

function messageProto(desc: DescMessage, depth: number): fc.Arbitrary<ProtoValue> {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return timestampProto;
    case "google.protobuf.Struct":
      // protobuf-es takes a Struct field as a plain JSON object.
      return fc.dictionary(hostileString, hostileJson.filter((v) => !hasUnsafeNumber(v)), { maxKeys: 5 });
    case "google.protobuf.Value":
      return fc.oneof(
        hostileString.map((value) => ({ kind: { case: "stringValue" as const, value } })),
        fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => ({ kind: { case: "numberValue" as const, value } })),
        fc.boolean().map((value) => ({ kind: { case: "boolValue" as const, value } })),
        fc.constant({ kind: { case: "nullValue" as const, value: 0 } }),
        fc.constant({ kind: { case: undefined } }),
        fc.dictionary(hostileString, hostileString, { maxKeys: 3 }).map((fields) => ({
          kind: { case: "structValue" as const, value: { fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { kind: { case: "stringValue" as const, value: v } }])) } },
        })),
      );
    case "google.protobuf.ListValue":
      return fc.array(hostileString, { maxLength: 4 }).map((items) => ({ values: items.map((value) => ({ kind: { case: "stringValue" as const, value } })) }));
  }
  if (depth > 2) return fc.constant({});
  return protoInitOf(desc, {}, depth + 1);
}

function hasUnsafeNumber(value: JsonValue): boolean {
  if (typeof value === "number") return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(hasUnsafeNumber);
  if (value && typeof value === "object") return Object.values(value).some(hasUnsafeNumber);
  return false;
}

function fieldProto(field: DescField, depth: number): fc.Arbitrary<ProtoValue> {
  switch (field.fieldKind) {
    case "scalar":
      return scalarProto(field.scalar);
    case "enum":
      // Unknown numbers too: a gRPC client may send any int32.
      return fc.oneof(fc.constantFrom(...field.enum.values.map((v) => v.number)), fc.integer({ min: -5, max: 1000 }));
    case "message":
      return messageProto(field.message, depth);
    case "list": {
      const item =
        field.listKind === "scalar" ? scalarProto(field.scalar) : field.listKind === "enum" ? fc.integer({ min: -1, max: 50 }) : messageProto(field.message, depth);
      return fc.array(item, { maxLength: 6 });
    }
    case "map": {
      const value = field.mapKind === "scalar" ? scalarProto(field.scalar) : field.mapKind === "enum" ? fc.integer({ min: 0, max: 20 }) : messageProto(field.message, depth);
      return fc.dictionary(hostileString, value, { maxKeys: 5 });
    }
  }
}

/**
 * A message initialiser for `desc` with every field either left at its
 * default (or the seed's value) or set to a hostile value of its type.
 * Fields of a oneof are set through the oneof's `{ case, value }`.
 */
export function protoInitOf(desc: DescMessage, seed: Readonly<Record<string, unknown>> = {}, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const plain = desc.fields.filter((f) => !f.oneof);
  const entries = plain.map((field) => fc.option(fieldProto(field, depth), { freq: 2, nil: undefined }).map((value) => [field.localName, value] as const));
  const oneofs = desc.oneofs.map((oneof) =>
    fc.option(
      fc.constantFrom(...oneof.fields).chain((field) => fieldProto(field, depth).map((value) => ({ case: field.localName, value }))),
      { freq: 2, nil: undefined },
    ).map((value) => [oneof.localName, value] as const),
  );
  return fc.tuple(...entries, ...oneofs).map((pairs) => {
    const out: Record<string, unknown> = { ...seed };
    for (const [key, value] of pairs) if (value !== undefined) out[key] = value;
    return out;
  });
}
