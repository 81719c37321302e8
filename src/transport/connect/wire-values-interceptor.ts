import { type DescField, type DescMessage, type Message, ScalarType } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { ListValueSchema, StructSchema, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { NOT_TEXT } from "../../contract/json-codec.ts";

/**
 * Values a request can carry but no handler should see, refused with one 400
 * VALIDATION_ERROR naming each field by its JSON path, before any handler
 * runs, on every door (gRPC, Connect, gRPC-Web and the REST bridge):
 *
 * - a google.protobuf.Timestamp outside 0001-01-01T00:00:00Z ..
 *   9999-12-31T23:59:59.999999999Z, or with nanos outside 0..999999999
 *   (the range of its JSON form; PostgreSQL refuses the statement);
 * - a google.protobuf.Value that holds nothing (no kind), or a number
 *   that is NaN or infinite (its JSON form cannot be written: the
 *   idempotency fingerprint of the request failed on it);
 * - text PostgreSQL cannot store as written, in any string at any depth
 *   (list items, map keys, Struct keys and values): the NUL character,
 *   which text and jsonb cannot hold, and unpaired UTF-16 surrogates, which
 *   JSON's `\uD800` escapes can write but UTF-8 cannot (text would be
 *   altered silently, jsonb refuses the statement). One rule for every
 *   field, so that a field whose own validation forgot it cannot turn such
 *   text into a 500. (The REST bridge's decoder already names unpaired
 *   surrogates, together with its other problems.)
 *
 * Enum numbers the contract does not declare are left to each operation's
 * validation, which names them together with the request's other problems.
 *
 * Which fields of a type can hold such values is worked out once per type;
 * a type without any is not walked.
 */
export function wireValuesInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream && planOf(req.method.input).length > 0) {
      const problems: FieldProblem[] = [];
      walk(reflect(req.method.input, req.message as Message), "", problems);
      if (problems.length > 0) throw new ValidationError(problems);
    }
    return next(req);
  };
}

const MIN_SECONDS = -62_135_596_800n; // 0001-01-01T00:00:00Z
const MAX_SECONDS = 253_402_300_799n; // 9999-12-31T23:59:59Z
const TIMESTAMP = "google.protobuf.Timestamp";
const RANGE_PROBLEM = "must be a date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z";
const NUL_PROBLEM = "must not contain the NUL character (U+0000)";
const STRING = ScalarType.STRING;
/** Types checked as a whole rather than walked field by field. */
const LEAF_TYPES: ReadonlySet<string> = new Set([TIMESTAMP, StructSchema.typeName, ValueSchema.typeName, ListValueSchema.typeName]);

const plans = new WeakMap<DescMessage, readonly DescField[]>();

/** The fields of `desc` that can hold a string, a timestamp or a free-form value, at any depth. */
function planOf(desc: DescMessage): readonly DescField[] {
  let plan = plans.get(desc);
  if (plan === undefined) {
    plans.set(desc, []); // cycles
    plan = desc.fields.filter((field) => {
      switch (field.fieldKind) {
        case "scalar":
          return field.scalar === STRING;
        case "message":
          return worthWalking(field.message);
        case "list":
          return field.listKind === "scalar" ? field.scalar === STRING : field.listKind === "message" && worthWalking(field.message);
        case "map":
          return field.mapKey === STRING || (field.mapKind === "scalar" ? field.scalar === STRING : field.mapKind === "message" && worthWalking(field.message));
        default:
          return false;
      }
    });
    plans.set(desc, plan);
  }
  return plan;
}

function worthWalking(desc: DescMessage): boolean {
  return LEAF_TYPES.has(desc.typeName) || planOf(desc).length > 0;
}

/** Why PostgreSQL cannot store `text` as written, if it cannot. */
function textProblem(text: string): string | undefined {
  if (text.includes("\0")) return NUL_PROBLEM;
  return text.isWellFormed() ? undefined : NOT_TEXT;
}

function checkText(text: unknown, path: string, problems: FieldProblem[]): void {
  const problem = typeof text === "string" ? textProblem(text) : undefined;
  if (problem) problems.push({ field: path, problem });
}

function walk(message: ReflectMessage, prefix: string, problems: FieldProblem[]): void {
  for (const field of planOf(message.desc)) {
    if (!message.isSet(field)) continue;
    const path = `${prefix}${field.jsonName}`;
    switch (field.fieldKind) {
      case "scalar":
        checkText(message.get(field), path, problems);
        break;
      case "message":
        checkMessage(message.get(field), path, problems);
        break;
      case "list": {
        let index = 0;
        for (const item of message.get(field)) {
          const at = `${path}[${index++}]`;
          if (field.listKind === "scalar") checkText(item, at, problems);
          else checkMessage(item as ReflectMessage, at, problems);
        }
        break;
      }
      case "map":
        for (const [key, value] of message.get(field)) {
          const at = `${path}.${String(key)}`;
          const keyProblem = typeof key === "string" ? textProblem(key) : undefined;
          if (keyProblem) problems.push({ field: at, problem: keyProblem });
          else if (field.mapKind === "scalar") checkText(value, at, problems);
          else if (field.mapKind === "message") checkMessage(value as ReflectMessage, at, problems);
        }
        break;
      default:
        break;
    }
  }
}

function checkMessage(value: ReflectMessage, path: string, problems: FieldProblem[]): void {
  const inner = value.message as unknown;
  switch (value.desc.typeName) {
    case TIMESTAMP: {
      const { seconds, nanos } = inner as { seconds: bigint; nanos: number };
      if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || nanos < 0 || nanos > 999_999_999) problems.push({ field: path, problem: RANGE_PROBLEM });
      return;
    }
    case StructSchema.typeName:
      checkStruct((inner as { fields: Record<string, Value> }).fields, path, problems);
      return;
    case ValueSchema.typeName:
      checkValue(inner as Value, path, problems);
      return;
    case ListValueSchema.typeName:
      (inner as { values: Value[] }).values.forEach((item, i) => checkValue(item, `${path}[${i}]`, problems));
      return;
    default:
      walk(value, `${path}.`, problems);
  }
}

function checkStruct(fields: Record<string, Value>, path: string, problems: FieldProblem[]): void {
  for (const [key, item] of Object.entries(fields)) {
    const at = `${path}.${key}`;
    const keyProblem = textProblem(key);
    if (keyProblem) problems.push({ field: at, problem: keyProblem });
    else checkValue(item, at, problems);
  }
}

function checkValue(value: Value, path: string, problems: FieldProblem[]): void {
  const kind = value.kind;
  switch (kind.case) {
    case undefined:
      problems.push({ field: path, problem: "must hold a JSON value" });
      return;
    case "numberValue":
      if (!Number.isFinite(kind.value)) problems.push({ field: path, problem: "must be a finite number" });
      return;
    case "stringValue":
      checkText(kind.value, path, problems);
      return;
    case "listValue":
      kind.value.values.forEach((item, i) => checkValue(item, `${path}[${i}]`, problems));
      return;
    case "structValue":
      checkStruct(kind.value.fields, path, problems);
      return;
    default:
      return;
  }
}
