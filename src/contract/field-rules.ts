import { type DescField, getOption, hasOption } from "@bufbuild/protobuf";
import { field as fieldRulesOption, type FieldRules } from "../gen/buf/validate/validate_pb.js";

/**
 * The contract's field rules: protovalidate's `(buf.validate.field)` options
 * (proto/buf/validate/validate.proto), declared next to the fields they
 * bound. Every door enforces them
 * (src/transport/connect/contract-validation-interceptor.ts, with
 * @bufbuild/protovalidate) and the OpenAPI document shows them
 * (src/openapi/schemas.ts); code that needs one of them as a number reads it
 * here rather than writing it again.
 */
export function fieldRulesOf(field: DescField): FieldRules | undefined {
  return hasOption(field, fieldRulesOption) ? getOption(field, fieldRulesOption) : undefined;
}

/** `string.max_len`: the most characters (Unicode code points) a string may have; undefined when unbounded. */
export function maxLengthOf(rules: FieldRules | undefined): number | undefined {
  if (rules?.type.case !== "string") return undefined;
  const max = rules.type.value.maxLen;
  return max > 0n ? Number(max) : undefined;
}
