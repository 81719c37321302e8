import { type DescField, type DescMessage, isMessage, type Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { ListValueSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";

/**
 * Values a protobuf message can carry on the wire but no JSON request can
 * express, refused with one 400 VALIDATION_ERROR naming each field before
 * any handler runs (gRPC, Connect and gRPC-Web callers; the REST bridge
 * never produces them):
 *
 * - a google.protobuf.Timestamp outside 0001-01-01T00:00:00Z ..
 *   9999-12-31T23:59:59.999999999Z, or with nanos outside 0..999999999
 *   (the range of its JSON form; PostgreSQL refuses the statement);
 * - a google.protobuf.Value that holds nothing (no kind), or a number
 *   that is NaN or infinite (its JSON form cannot be written: the
 *   idempotency fingerprint of the request failed on it).
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

const plans = new WeakMap<DescMessage, readonly DescField[]>();

/** The fields of `desc` that can hold a timestamp or a Value, at any depth. */
function planOf(desc: DescMessage): readonly DescField[] {
  let plan = plans.get(desc);
  if (plan === undefined) {
    plans.set(desc, []); // cycles
    plan = desc.fields.filter((field) => {
      const nested = field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message") || (field.fieldKind === "map" && field.mapKind === "message") ? field.message : undefined;
      if (!nested) return false;
      if (nested.typeName === TIMESTAMP || nested.typeName === ValueSchema.typeName || nested.typeName === ListValueSchema.typeName) return true;
      return nested.typeName !== "google.protobuf.Struct" && planOf(nested).length > 0;
    });
    plans.set(desc, plan);
  }
  return plan;
}

function walk(message: ReflectMessage, prefix: string, problems: FieldProblem[]): void {
  for (const field of planOf(message.desc)) {
    if (!message.isSet(field)) continue;
    const path = `${prefix}${field.jsonName}`;
    switch (field.fieldKind) {
      case "message":
        checkMessage(message.get(field), path, problems);
        break;
      case "list": {
        let index = 0;
        for (const item of message.get(field)) checkMessage(item as ReflectMessage, `${path}[${index++}]`, problems);
        break;
      }
      case "map":
        for (const [key, value] of message.get(field)) checkMessage(value as ReflectMessage, `${path}.${String(key)}`, problems);
        break;
      default:
        break;
    }
  }
}

function checkMessage(value: ReflectMessage, path: string, problems: FieldProblem[]): void {
  const inner = value.message;
  switch (value.desc.typeName) {
    case TIMESTAMP: {
      const { seconds, nanos } = inner as unknown as { seconds: bigint; nanos: number };
      if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || nanos < 0 || nanos > 999_999_999) problems.push({ field: path, problem: RANGE_PROBLEM });
      return;
    }
    case ValueSchema.typeName:
      if (isMessage(inner, ValueSchema)) checkValue(inner, path, problems);
      return;
    case ListValueSchema.typeName:
      if (isMessage(inner, ListValueSchema)) inner.values.forEach((item, i) => checkValue(item, `${path}[${i}]`, problems));
      return;
    default:
      walk(value, `${path}.`, problems);
  }
}

function checkValue(value: Message & { kind: { case: string | undefined; value?: unknown } }, path: string, problems: FieldProblem[]): void {
  const kind = value.kind;
  if (kind.case === undefined) problems.push({ field: path, problem: "must hold a JSON value" });
  else if (kind.case === "numberValue" && !Number.isFinite(kind.value as number)) problems.push({ field: path, problem: "must be a finite number" });
  else if (kind.case === "listValue") (kind.value as { values: (typeof value)[] }).values.forEach((item, i) => checkValue(item, `${path}[${i}]`, problems));
  else if (kind.case === "structValue") {
    for (const [key, item] of Object.entries((kind.value as { fields: Record<string, typeof value> }).fields)) checkValue(item, `${path}.${key}`, problems);
  }
}
