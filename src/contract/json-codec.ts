import {
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
  ScalarType,
  fromJson,
  isMessage,
  toJson,
} from "@bufbuild/protobuf";
import { type FieldProblem, ValidationError } from "./api-error.ts";

/**
 * The JSON form of the public HTTP API, derived generically from the
 * descriptors (the OpenAPI generator follows the same rules):
 *
 * - field names are the proto JSON names (camelCase);
 * - enum values are the value name without the enum's prefix, in lower case
 *   (`MESSAGE_STATUS_QUEUED` is `"queued"`); the zero value is never written;
 * - fields with explicit presence (proto3 `optional`, singular messages) are
 *   always present and `null` when unset;
 * - google.protobuf.Timestamp is ISO 8601 UTC with exactly three fractional
 *   digits (`2026-01-02T03:04:05.000Z`).
 *
 * Canonical protobuf JSON differs on all four points, which is why the REST
 * bridge does not use `toJson` directly. Connect's own JSON protocol keeps
 * the canonical form.
 */

const TIMESTAMP = "google.protobuf.Timestamp";
const FREE_FORM = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

// ------------------------------------------------------------------ enums

/** `MessageStatus` -> `MESSAGE_STATUS_` (also `HTTPStatus` -> `HTTP_STATUS_`). */
export function enumPrefix(desc: DescEnum): string {
  const snake = desc.name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toUpperCase();
  return `${snake}_`;
}

/** Public names by value number, worked out once per enum (they are read on every answer). */
const enumNames = new WeakMap<DescEnum, Map<number, string>>();

function publicNamesOf(desc: DescEnum): Map<number, string> {
  let names = enumNames.get(desc);
  if (!names) {
    const prefix = enumPrefix(desc);
    names = new Map(
      desc.values
        .filter((v) => v.number !== 0)
        .map((v) => [v.number, (v.name.startsWith(prefix) ? v.name.slice(prefix.length) : v.name).toLowerCase()]),
    );
    enumNames.set(desc, names);
  }
  return names;
}

/** Public JSON name of an enum value, e.g. `queued`. Undefined for the zero value. */
export function enumValueToJson(desc: DescEnum, value: number): string | undefined {
  return publicNamesOf(desc).get(value);
}

/** All public JSON names of an enum, in declaration order, without the zero value. */
export function enumJsonValues(desc: DescEnum): string[] {
  return desc.values.filter((v) => v.number !== 0).map((v) => enumValueToJson(desc, v.number) as string);
}

/** Number of the enum value with the given public JSON name, or undefined. */
export function enumValueFromJson(desc: DescEnum, name: string): number | undefined {
  const found = desc.values.find((v) => v.number !== 0 && enumValueToJson(desc, v.number) === name);
  return found?.number;
}

// ------------------------------------------------------------------ writing

function timestampToIso(ts: { seconds: bigint; nanos: number }): string {
  const millis = Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1_000_000);
  return new Date(millis).toISOString();
}

function scalarToJson(type: ScalarType, value: unknown): JsonValue {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return String(value);
    case ScalarType.BYTES:
      return Buffer.from(value as Uint8Array).toString("base64");
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      const n = value as number;
      return Number.isFinite(n) ? n : String(n);
    }
    default:
      return value as JsonValue;
  }
}

function messageValueToJson(desc: DescMessage, value: unknown): JsonValue {
  if (desc.typeName === TIMESTAMP) return timestampToIso(value as { seconds: bigint; nanos: number });
  // protobuf-es hands out google.protobuf.Struct fields as plain objects.
  if (desc.typeName === "google.protobuf.Struct" && !isMessage(value)) return value as JsonObject;
  if (FREE_FORM.has(desc.typeName)) return toJson(desc, value as MessageShape<DescMessage>);
  return messageToPublicJson(desc, value as MessageShape<DescMessage>);
}

/** Renders a message in the public JSON form described above. */
export function messageToPublicJson(desc: DescMessage, message: MessageShape<DescMessage>): JsonObject {
  const out: JsonObject = {};
  const record = message as unknown as Record<string, unknown>;
  for (const field of desc.fields) {
    const value = record[field.localName];
    out[field.jsonName] = fieldToJson(field, value);
  }
  return out;
}

function fieldToJson(field: DescField, value: unknown): JsonValue {
  switch (field.fieldKind) {
    case "scalar":
      return value === undefined ? null : scalarToJson(field.scalar, value);
    case "enum":
      return value === undefined ? null : (enumValueToJson(field.enum, value as number) ?? null);
    case "message":
      return value === undefined ? null : messageValueToJson(field.message, value);
    case "list": {
      const list = (value as unknown[] | undefined) ?? [];
      switch (field.listKind) {
        case "scalar":
          return list.map((v) => scalarToJson(field.scalar, v));
        case "enum":
          return list.map((v) => enumValueToJson(field.enum, v as number) ?? null);
        case "message":
          return list.map((v) => messageValueToJson(field.message, v));
      }
      break;
    }
    case "map": {
      const map = (value as Record<string, unknown> | undefined) ?? {};
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(map)) {
        switch (field.mapKind) {
          case "scalar":
            out[k] = scalarToJson(field.scalar, v);
            break;
          case "enum":
            out[k] = enumValueToJson(field.enum, v as number) ?? null;
            break;
          case "message":
            out[k] = messageValueToJson(field.message, v);
            break;
        }
      }
      return out;
    }
  }
  return null;
}

// ------------------------------------------------------------------ reading

/** Where a JSON value came from: query strings arrive as text and are coerced. */
export type JsonSource = "body" | "query" | "path";

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
/** The range of google.protobuf.Timestamp: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, in ms. */
const MIN_TIMESTAMP_MS = -62_135_596_800_000;
const MAX_TIMESTAMP_MS = 253_402_300_799_999;
/** A UTF-16 surrogate without its pair: valid in JSON (`"\ud800"`), not Unicode text. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const NOT_TEXT = "must be Unicode text (it holds an unpaired surrogate)";
/** A key of a JSON body that names no field of its message, on every door. */
export const UNKNOWN_FIELD = "is not a known field";
/** Free-form values (Struct, Value, ListValue) deeper than this are refused here, naming the field (protobuf-es stops at 100, naming none). */
const MAX_FREE_FORM_DEPTH = 64;

/** 64-bit integers: protobuf-es refuses values outside these with a message naming no field. */
const INT64_RANGE: Partial<Record<ScalarType, [bigint, bigint]>> = {
  [ScalarType.INT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SINT64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.SFIXED64]: [-(2n ** 63n), 2n ** 63n - 1n],
  [ScalarType.UINT64]: [0n, 2n ** 64n - 1n],
  [ScalarType.FIXED64]: [0n, 2n ** 64n - 1n],
};

const INT32_RANGE: Partial<Record<ScalarType, [number, number]>> = {
  [ScalarType.INT32]: [-2147483648, 2147483647],
  [ScalarType.SINT32]: [-2147483648, 2147483647],
  [ScalarType.SFIXED32]: [-2147483648, 2147483647],
  [ScalarType.UINT32]: [0, 4294967295],
  [ScalarType.FIXED32]: [0, 4294967295],
};

/** The base64 alphabets protobuf JSON reads (standard and URL-safe), padding at the end only, line breaks allowed (wrapped output). */
const BASE64_TEXT = /^[A-Za-z0-9+/_\-\r\n]*(?:=[\r\n]*){0,2}$/;

/**
 * Whether protobuf JSON reads `value` as bytes, checked here so that a bad
 * value is named by its field (protobuf-es's decoder names none): the
 * alphabet, padding at the end, and no group of a single character.
 */
function isBase64(value: string): boolean {
  if (!BASE64_TEXT.test(value)) return false;
  const breaks = /[\r\n]/.test(value) ? (value.match(/[\r\n]/g)?.length ?? 0) : 0;
  // The alphabet check put any padding at the end, among line breaks only.
  let padding = 0;
  for (let i = value.length - 1; i >= 0 && "=\r\n".includes(value.charAt(i)); i--) if (value.charAt(i) === "=") padding++;
  return (value.length - breaks - padding) % 4 !== 1;
}

/**
 * A bytes field the reader decoded itself (Node's native base64, some
 * hundred times faster than protobuf-es's decoder in JavaScript, which a
 * send's 10 MiB of attachments would keep busy for about 170 ms); it is
 * set on the message after protobuf-es built the rest. Its path holds no
 * map key, so it can be walked back by field names and list indexes.
 */
interface DecodedBytes {
  readonly path: string;
  readonly value: Uint8Array;
}

/** Sets each decoded bytes field on `message`, found by its JSON path (`attachments[2].content`). */
function setDecodedBytes(desc: DescMessage, message: object, decoded: readonly DecodedBytes[]): void {
  for (const { path, value } of decoded) {
    let target: Record<string, unknown> = message as Record<string, unknown>;
    let type: DescMessage | undefined = desc;
    const steps = path.split(".");
    steps.forEach((step, i) => {
      const [name = "", ...indexes] = step.split(/\[(\d+)\]/).filter((part) => part !== "");
      const field = type ? fieldsByName(type).get(name) : undefined;
      if (!field) throw new Error(`contract: no field ${path}`);
      if (i === steps.length - 1) {
        target[field.localName] = value;
        return;
      }
      let next = target[field.localName];
      for (const index of indexes) next = (next as unknown[])[Number(index)];
      target = next as Record<string, unknown>;
      type = field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message") ? field.message : undefined;
    });
  }
}

class Reader {
  readonly problems: FieldProblem[] = [];
  /** Bytes fields decoded here, set on the message after protobuf-es built it (see DecodedBytes). */
  readonly decoded: DecodedBytes[] = [];
  /** Inside a map's values: paths there hold keys, so bytes are left to protobuf-es. */
  #inMap = 0;
  readonly source: JsonSource;
  constructor(source: JsonSource) {
    this.source = source;
  }

  problem(path: string, problem: string): undefined {
    this.problems.push({ field: path, problem });
    return undefined;
  }

  /** Converts one public-JSON value into canonical protobuf JSON, or records a problem. */
  scalar(path: string, type: ScalarType, value: JsonValue): JsonValue | undefined {
    const fromText = this.source !== "body" && typeof value === "string";
    switch (type) {
      case ScalarType.STRING:
        if (typeof value !== "string") return this.problem(path, "must be a string");
        return UNPAIRED_SURROGATE.test(value) ? this.problem(path, NOT_TEXT) : value;
      case ScalarType.BOOL:
        if (typeof value === "boolean") return value;
        if (fromText && (value === "true" || value === "false")) return value === "true";
        return this.problem(path, "must be a boolean");
      case ScalarType.DOUBLE:
      case ScalarType.FLOAT: {
        const n = fromText && value !== "" ? Number(value) : value;
        return typeof n === "number" && Number.isFinite(n) ? n : this.problem(path, "must be a number");
      }
      case ScalarType.BYTES:
        return typeof value === "string" && isBase64(value) ? value : this.problem(path, "must be base64 text");
      default: {
        // 64-bit integers also as decimal strings, as the proto3 JSON mapping writes them (and as this API answers them).
        const range64 = INT64_RANGE[type];
        if (range64 && typeof value === "string" && /^-?\d{1,20}$/.test(value)) {
          const big = BigInt(value);
          return big < range64[0] || big > range64[1] ? this.problem(path, "is out of range") : value;
        }
        const n = fromText && /^-?\d+$/.test(value) ? Number(value) : value;
        if (typeof n !== "number" || !Number.isInteger(n)) return this.problem(path, "must be an integer");
        const range = INT32_RANGE[type];
        if (range && (n < range[0] || n > range[1])) return this.problem(path, "is out of range");
        if (range64 && (BigInt(n) < range64[0] || BigInt(n) > range64[1])) return this.problem(path, "is out of range");
        return n;
      }
    }
  }

  enumValue(path: string, desc: DescEnum, value: JsonValue): JsonValue | undefined {
    const number = typeof value === "string" ? enumValueFromJson(desc, value) : undefined;
    if (number === undefined) return this.problem(path, `must be one of ${enumJsonValues(desc).join(", ")}`);
    return desc.value[number]?.name;
  }

  messageValue(path: string, desc: DescMessage, value: JsonValue): JsonValue | undefined {
    if (desc.typeName === TIMESTAMP) {
      if (typeof value !== "string" || !RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
        return this.problem(path, "must be an ISO 8601 date-time with time zone, e.g. 2026-01-31T12:00:00Z");
      }
      const ms = Date.parse(value);
      if (ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) return this.problem(path, "must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z");
      return new Date(value).toISOString();
    }
    if (FREE_FORM.has(desc.typeName)) {
      if (desc.typeName === "google.protobuf.Struct" && !isObject(value)) return this.problem(path, "must be an object");
      if (desc.typeName === "google.protobuf.ListValue" && !Array.isArray(value)) return this.problem(path, "must be an array");
      return this.freeForm(path, value, 0) ? value : undefined;
    }
    if (!isObject(value)) return this.problem(path, "must be an object");
    return this.object(path, desc, value);
  }

  /** Whether a free-form value is one protobuf-es can read: not too deep, Unicode text throughout; else records the problem. */
  freeForm(path: string, value: JsonValue, depth: number): boolean {
    if (depth > MAX_FREE_FORM_DEPTH) return this.problem(path, `is nested more than ${MAX_FREE_FORM_DEPTH} levels deep`) ?? false;
    if (typeof value === "string") return UNPAIRED_SURROGATE.test(value) ? (this.problem(path, NOT_TEXT) ?? false) : true;
    if (Array.isArray(value)) return value.every((item, i) => this.freeForm(`${path}[${i}]`, item, depth + 1));
    if (isObject(value)) {
      return Object.entries(value).every(([key, item]) =>
        UNPAIRED_SURROGATE.test(key) ? (this.problem(path, `keys ${NOT_TEXT}`) ?? false) : this.freeForm(`${path}.${key}`, item, depth + 1),
      );
    }
    return true;
  }

  field(path: string, field: DescField, value: JsonValue): JsonValue | undefined {
    switch (field.fieldKind) {
      case "scalar":
        if (field.scalar === ScalarType.BYTES && this.#inMap === 0 && typeof value === "string" && isBase64(value)) {
          this.decoded.push({ path, value: Buffer.from(value, "base64") });
          return "";
        }
        return this.scalar(path, field.scalar, value);
      case "enum":
        return this.enumValue(path, field.enum, value);
      case "message":
        return this.messageValue(path, field.message, value);
      case "list": {
        // A query parameter given once is a one-element list.
        const list = Array.isArray(value) ? value : this.source === "query" ? [value] : undefined;
        if (!list) return this.problem(path, "must be an array");
        return list.map((item, i) => {
          const itemPath = `${path}[${i}]`;
          if (item === null) return this.problem(itemPath, "must not be null") ?? null;
          const converted =
            field.listKind === "scalar"
              ? this.scalar(itemPath, field.scalar, item)
              : field.listKind === "enum"
                ? this.enumValue(itemPath, field.enum, item)
                : this.messageValue(itemPath, field.message, item);
          return converted ?? null;
        });
      }
      case "map": {
        if (!isObject(value)) return this.problem(path, "must be an object");
        this.#inMap++;
        try {
          return this.mapValue(path, field, value);
        } finally {
          this.#inMap--;
        }
      }
    }
  }

  mapValue(path: string, field: DescField & { fieldKind: "map" }, value: JsonObject): JsonObject {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const entryPath = `${path}.${k}`;
      if (UNPAIRED_SURROGATE.test(k)) {
        this.problem(path, `keys ${NOT_TEXT}`);
        continue;
      }
      if (v === null) {
        this.problem(entryPath, "must not be null");
        continue;
      }
      const converted =
        field.mapKind === "scalar"
          ? this.scalar(entryPath, field.scalar, v)
          : field.mapKind === "enum"
            ? this.enumValue(entryPath, field.enum, v)
            : this.messageValue(entryPath, field.message, v);
      if (converted !== undefined) out[k] = converted;
    }
    return out;
  }

  object(path: string, desc: DescMessage, value: JsonObject): JsonObject {
    const out: JsonObject = {};
    for (const [key, raw] of Object.entries(value)) {
      const fieldPath = path ? `${path}.${key}` : key;
      const field = fieldsByName(desc).get(key);
      if (!field) {
        this.problem(fieldPath, UNKNOWN_FIELD);
        continue;
      }
      // null means "not set" for every field, as in canonical protobuf JSON.
      if (raw === null || raw === undefined) continue;
      const converted = this.field(fieldPath, field, raw);
      if (converted !== undefined) out[field.jsonName] = converted;
    }
    return out;
  }
}

/** A message's fields by JSON name and by proto name, worked out once per message type. */
const fieldNames = new WeakMap<DescMessage, Map<string, DescField>>();

function fieldsByName(desc: DescMessage): Map<string, DescField> {
  let names = fieldNames.get(desc);
  if (!names) {
    names = new Map();
    // JSON names first: where a JSON name equals another field's proto name, the JSON name wins, as with find() before.
    for (const field of desc.fields) if (!names.has(field.jsonName)) names.set(field.jsonName, field);
    for (const field of desc.fields) if (!names.has(field.name)) names.set(field.name, field);
    fieldNames.set(desc, names);
  }
  return names;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Reads a request message from public JSON. Every problem is collected and
 * thrown as one ValidationError (400 VALIDATION_ERROR) that names each field.
 */
export function messageFromPublicJson<Desc extends DescMessage>(
  desc: Desc,
  value: unknown,
  source: JsonSource = "body",
): MessageShape<Desc> {
  if (!isObject(value)) throw new ValidationError([{ field: "body", problem: "must be a JSON object" }]);
  const reader = new Reader(source);
  const canonical = reader.object("", desc, value);
  if (reader.problems.length > 0) throw new ValidationError(reader.problems);
  try {
    const message = fromJson(desc, canonical);
    setDecodedBytes(desc, message, reader.decoded);
    return message;
  } catch (error) {
    // The reader checks every type fromJson does; keep a named answer anyway.
    throw new ValidationError([{ field: "body", problem: error instanceof Error ? error.message : "is invalid" }]);
  }
}

// ------------------------------------------------------------------ canonical JSON

/** A canonical protobuf JSON body, minus what its decoding refuses by name, and those problems. */
export interface CanonicalJsonCheck {
  /** Keys that name no field, and enum values by names the enum lacks, by JSON path. */
  readonly problems: readonly FieldProblem[];
  /** The body without them. */
  readonly known: JsonValue;
}

/**
 * Names, by JSON path, what protobuf JSON decoding (protobuf-es, with
 * unknown fields refused) refuses by name only, without a path: keys that
 * name no field of their message, enum values written as names the enum
 * does not have, and bytes that are not base64 text. This is the canonical form Connect's JSON codec reads
 * (fields by JSON or proto name, enum values by their full names or by
 * number); the public form has its own reader above. Well-known types are
 * left to the decoder: their JSON has no field names to miss.
 */
export function checkCanonicalJson(desc: DescMessage, json: JsonValue): CanonicalJsonCheck {
  const problems: FieldProblem[] = [];
  return { problems, known: canonicalMessage(desc, json, "", problems) };
}

function canonicalMessage(desc: DescMessage, json: JsonValue, prefix: string, problems: FieldProblem[]): JsonValue {
  if (!isObject(json) || desc.typeName.startsWith("google.protobuf.")) return json;
  const known: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    const path = `${prefix}${key}`;
    const field = fieldsByName(desc).get(key);
    if (!field) {
      problems.push({ field: path, problem: UNKNOWN_FIELD });
      continue;
    }
    const kept = canonicalField(field, value, path, problems);
    if (kept !== undefined) known[key] = kept;
  }
  return known;
}

function canonicalField(field: DescField, value: JsonValue, path: string, problems: FieldProblem[]): JsonValue | undefined {
  switch (field.fieldKind) {
    case "enum":
      return canonicalEnum(field.enum, value, path, problems);
    case "message":
      return canonicalMessage(field.message, value, `${path}.`, problems);
    case "list":
      if (!Array.isArray(value) || field.listKind === "scalar") return value;
      return value.flatMap((item, i) => {
        const kept =
          field.listKind === "enum" ? canonicalEnum(field.enum, item, `${path}[${i}]`, problems) : canonicalMessage(field.message, item, `${path}[${i}].`, problems);
        return kept === undefined ? [] : [kept];
      });
    case "map": {
      if (!isObject(value) || field.mapKind === "scalar") return value;
      const known: JsonObject = {};
      for (const [key, item] of Object.entries(value)) {
        const kept =
          field.mapKind === "enum" ? canonicalEnum(field.enum, item, `${path}.${key}`, problems) : canonicalMessage(field.message, item, `${path}.${key}.`, problems);
        if (kept !== undefined) known[key] = kept;
      }
      return known;
    }
    case "scalar":
      if (field.scalar !== ScalarType.BYTES || typeof value !== "string" || isBase64(value)) return value;
      problems.push({ field: path, problem: "must be base64 text" });
      return undefined;
    default:
      return value;
  }
}

function canonicalEnum(desc: DescEnum, value: JsonValue, path: string, problems: FieldProblem[]): JsonValue | undefined {
  if (typeof value !== "string" || desc.values.some((v) => v.name === value || v.jsonName === value)) return value;
  problems.push({ field: path, problem: `must be one of ${desc.values.filter((v) => v.number !== 0).map((v) => v.name).join(", ")}` });
  return undefined;
}
