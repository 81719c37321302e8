import { type DescField, type DescMessage, getOption, hasOption } from "@bufbuild/protobuf";
import { field as fieldRules } from "@gen/buf/validate/validate_pb.js";
import { FieldBehavior, field_behavior } from "@gen/google/api/field_behavior_pb.js";
import { z } from "zod/mini";
import { fromLocalInput } from "../../app/format.tsx";

/**
 * What the contract says of a request field, read from the generated
 * descriptors: `(google.api.field_behavior) = REQUIRED` and protovalidate's
 * `(buf.validate.field)` bounds. The screen checks these before sending, so
 * an obvious slip is shown at once; everything else (an address's form, a
 * time in the future, a host that must be public) is the server's to say,
 * and its VALIDATION_ERROR lands on the field it names.
 */
export interface FieldRule {
  /** The field's name in JSON, which VALIDATION_ERROR uses (`displayName`). */
  readonly name: string;
  readonly required: boolean;
  /** `string.max_len`: the most characters (code points). */
  readonly maxLength?: number;
  /** Integer bounds (`gte`/`lte`), when the contract sets them. */
  readonly min?: number;
  readonly max?: number;
}

/** The rule of `request`'s field `name` (its TypeScript name); a form's own field, not in the request, has none. */
export function fieldRule(request: DescMessage, name: string): FieldRule {
  const field = request.field[name];
  if (!field) return { name, required: false };
  return { name: field.jsonName, required: isRequired(field), ...bounds(field) };
}

function isRequired(field: DescField): boolean {
  return hasOption(field, field_behavior) && getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);
}

function bounds(field: DescField): Pick<FieldRule, "maxLength" | "min" | "max"> {
  if (!hasOption(field, fieldRules)) return {};
  const rules = getOption(field, fieldRules).type;
  switch (rules.case) {
    case "string":
      return rules.value.maxLen > 0n ? { maxLength: Number(rules.value.maxLen) } : {};
    case "int32":
    case "uint32": {
      const { greaterThan, lessThan } = rules.value;
      return {
        ...(greaterThan.case === "gte" ? { min: greaterThan.value } : {}),
        ...(lessThan.case === "lte" ? { max: lessThan.value } : {}),
      };
    }
    default:
      return {};
  }
}

/** How one form field checks its value, given the contract's rule for it. */
export type FieldCheck<T = unknown> = (rule: FieldRule) => z.ZodMiniType<T, T>;

const REQUIRED = "Fill this in.";

/** Text typed into an input: trimmed, required and bounded as the contract says. */
export function text(): FieldCheck<string> {
  return (rule) =>
    z.string().check(
      z.trim(),
      z.refine((value) => !rule.required || value !== "", REQUIRED),
      z.refine((value) => rule.maxLength === undefined || [...value].length <= rule.maxLength, `At most ${rule.maxLength ?? 0} characters.`),
    );
}

/** One value picked from a list (a <select>); empty means "any" unless the contract requires it. */
export function choice(): FieldCheck<string> {
  return (rule) => z.string().check(z.refine((value) => !rule.required || value !== "", "Choose one."));
}

/** Values ticked in a set of checkboxes; at least one when the contract requires the list. */
export function choices(whenNone = "Choose at least one."): FieldCheck<string[]> {
  return (rule) => z.array(z.string()).check(z.refine((values) => !rule.required || values.length > 0, whenNone));
}

/** A `datetime-local` input (the member's local time): empty, or a time. */
export function localTime(): FieldCheck<string> {
  return (rule) =>
    z.string().check(
      z.refine((value) => value !== "" || !rule.required, REQUIRED),
      z.refine((value) => value === "" || fromLocalInput(value) !== undefined, "Enter a date and time."),
    );
}

/** A yes-or-no field (a checkbox). */
export function yesNo(): FieldCheck<boolean> {
  return () => z.boolean();
}

/** A value the form's own control keeps valid (a role from the role picker). */
export function picked<T>(): FieldCheck<T> {
  return () => z.custom<T>();
}
