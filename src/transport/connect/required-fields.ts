import { type DescField, type DescMessage, getOption, isMessage, type Message } from "@bufbuild/protobuf";
import { isReflectMessage, reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { FieldProblem } from "../../contract/api-error.ts";
import { field_behavior, FieldBehavior } from "../../gen/google/api/field_behavior_pb.js";

/**
 * What "required" means for a request: the fields the contract marks
 * `(google.api.field_behavior) = REQUIRED`, which the contract validation
 * (contract-validation-interceptor.ts) refuses when missing, before any
 * handler, with one 400 VALIDATION_ERROR naming each missing field, on every
 * door. The same marks make those fields `required` in the OpenAPI
 * document, so the document and the service agree by construction.
 *
 * "Missing" is proto3's notion of unset: an absent message, an empty list or
 * map, a zero value of a field without explicit presence (`""`, `0`, the
 * `*_UNSPECIFIED` enum value), and also a google.protobuf.Value holding JSON
 * null. Problems read `<field>: is required`, with the field's JSON path, as
 * the send validation words a missing `to`: a missing field is named once,
 * there, and the handler's own validation only sees requests that have it.
 *
 * Answers the REQUIRED fields `message` lacks, nested messages, lists and
 * maps included, in field order.
 */
export function missingRequiredFields(desc: DescMessage, message: Message): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (planOf(desc).length > 0) walk(reflect(desc, message), "", problems);
  return problems;
}

/**
 * The fields of a message type worth looking at: the REQUIRED ones and those
 * whose messages can hold REQUIRED fields. Worked out once per type (reading
 * the options on every call was a visible share of the API's CPU under load);
 * a type without any, such as most requests' nested types, is not walked.
 */
const plans = new WeakMap<DescMessage, readonly DescField[]>();

function planOf(desc: DescMessage): readonly DescField[] {
  let plan = plans.get(desc);
  if (plan === undefined) {
    plan = desc.fields.filter((field) => isRequired(field) || canHoldRequired(nestedMessage(field)));
    plans.set(desc, plan);
  }
  return plan;
}

/** The message type a field holds (itself, in a list or as a map value), if any. */
function nestedMessage(field: DescField): DescMessage | undefined {
  switch (field.fieldKind) {
    case "message":
      return field.message;
    case "list":
      return field.listKind === "message" ? field.message : undefined;
    case "map":
      return field.mapKind === "message" ? field.message : undefined;
    default:
      return undefined;
  }
}

/** Whether any message type reachable from `desc` (itself included) has a REQUIRED field; cycles are fine. */
function canHoldRequired(desc: DescMessage | undefined): boolean {
  if (!desc) return false;
  const seen = new Set<DescMessage>([desc]);
  const queue = [desc];
  for (let next = queue.pop(); next; next = queue.pop()) {
    for (const field of next.fields) {
      if (isRequired(field)) return true;
      const nested = nestedMessage(field);
      if (nested && !seen.has(nested)) {
        seen.add(nested);
        queue.push(nested);
      }
    }
  }
  return false;
}

function walk(message: ReflectMessage, prefix: string, problems: FieldProblem[]): void {
  for (const field of planOf(message.desc)) {
    const path = `${prefix}${field.jsonName}`;
    if (isRequired(field) && (!message.isSet(field) || isJsonNull(message, field))) {
      problems.push({ field: path, problem: "is required" });
      continue;
    }
    if (!message.isSet(field)) continue;
    // Only set messages are walked: the fields of an absent optional message are not missing.
    switch (field.fieldKind) {
      case "message":
        walk(message.get(field), `${path}.`, problems);
        break;
      case "list": {
        let index = 0;
        for (const item of message.get(field)) {
          if (isReflectMessage(item)) walk(item, `${path}[${index}].`, problems);
          index++;
        }
        break;
      }
      case "map":
        for (const [key, value] of message.get(field)) {
          if (isReflectMessage(value)) walk(value, `${path}.${String(key)}.`, problems);
        }
        break;
      default:
        break;
    }
  }
}

const requiredFields = new WeakMap<DescField, boolean>();

function isRequired(field: DescField): boolean {
  let required = requiredFields.get(field);
  if (required === undefined) {
    required = getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);
    requiredFields.set(field, required);
  }
  return required;
}

/** A google.protobuf.Value field set to JSON `null`: present on the wire, but no value. */
function isJsonNull(message: ReflectMessage, field: DescField): boolean {
  if (field.fieldKind !== "message") return false;
  const value = message.get(field).message;
  return isMessage(value, ValueSchema) && value.kind.case === "nullValue";
}
