/**
 * Message, enum and field descriptors as OpenAPI 3.0 schemas, and the
 * registry of `components.schemas`. The JSON forms are the REST bridge's
 * (src/contract/json-codec.ts): proto JSON names, lower-case enum strings,
 * explicit-presence fields nullable, well-known types in their JSON form.
 */
import { getOption, ScalarType } from "@bufbuild/protobuf";
import type { DescEnum, DescField, DescMessage, DescService } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import type { FieldRules } from "../gen/buf/validate/validate_pb.js";
import { field_behavior, FieldBehavior } from "../gen/google/api/field_behavior_pb.js";
import { openapi_schema } from "../gen/mail/v1/options_pb.js";
import { fieldRulesOf } from "../contract/field-rules.ts";
import { wireEnumValuesOf } from "../contract/enums.ts";
import { enumJsonValues } from "../contract/json-codec.ts";
import { operationSpec } from "../contract/routes.ts";
import { commentOf, withDescription } from "./comments.ts";
import type { JsonObject, SchemaObject } from "./types.ts";

/**
 * `request` schemas describe what a caller may send (only the fields the
 * contract marks `(google.api.field_behavior) = REQUIRED` are required);
 * `response` schemas describe answers, where every field is always present.
 */
export type Mode = "request" | "response";

const TIMESTAMP = "google.protobuf.Timestamp";
const STRUCT = "google.protobuf.Struct";
const VALUE = "google.protobuf.Value";

/**
 * The message schemas of `components.schemas`. A message used in both
 * requests and answers gets two components: `Name` (answer: every field
 * required) and `NameInput` (request: the REQUIRED fields only), because
 * OpenAPI 3.0 cannot say "required only in answers" otherwise.
 */
export class SchemaRegistry {
  private readonly schemas = new Map<string, SchemaObject>();
  /** Component name -> `typeName/mode` that owns it, to catch name clashes. */
  private readonly owners = new Map<string, string>();
  private readonly inResponses: ReadonlySet<string>;

  /** `services`: every service whose operations the document holds. */
  constructor(services: readonly DescService[]) {
    this.inResponses = responseReachable(services);
  }

  all(): Record<string, SchemaObject> {
    return Object.fromEntries([...this.schemas.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  define(name: string, schema: SchemaObject): void {
    this.claim(name, `component:${name}`);
    this.schemas.set(name, schema);
  }

  /** A `$ref` to the component of a message (or the inline JSON form of a well-known type). */
  messageSchemaRef(message: DescMessage, mode: Mode): SchemaObject {
    const wkt = wellKnownSchema(message);
    if (wkt) return wkt;
    const name = this.componentName(message, mode);
    if (this.claim(name, `${message.typeName}/${mode}`)) {
      // Reserve first: a recursive message refers to itself while being built.
      this.schemas.set(name, {});
      this.schemas.set(name, this.objectSchema(message, mode, []));
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  objectSchema(message: DescMessage, mode: Mode, omit: readonly string[]): SchemaObject {
    const properties: JsonObject = {};
    const required: string[] = [];
    for (const field of message.fields) {
      if (omit.includes(field.name)) continue;
      properties[field.jsonName] = this.fieldSchema(field, mode, true);
      if (mode === "response" || isRequiredInRequests(field)) {
        required.push(field.jsonName);
      }
    }
    const schema: SchemaObject = { type: "object", properties };
    if (required.length > 0) schema.required = required;
    return withDescription(schema, commentOf(message));
  }

  /**
   * The schema of one field. `nullableIfPresence` is false where the value
   * stands alone (a response body that is one field, a path parameter).
   */
  fieldSchema(field: DescField, mode: Mode, nullableIfPresence: boolean): SchemaObject {
    const override = getOption(field, openapi_schema);
    if (override !== "") return withDescription(parseSchemaOverride(field, override), commentOf(field));

    const rules = fieldRulesOf(field);
    let schema: SchemaObject;
    switch (field.fieldKind) {
      case "scalar":
        schema = withWireEnum(withRules(scalarSchema(field.scalar), rules), field);
        break;
      case "enum":
        schema = enumSchema(field.enum);
        break;
      case "message":
        schema = this.messageSchemaRef(field.message, mode);
        break;
      case "list": {
        const repeated = rules?.type.case === "repeated" ? rules.type.value : undefined;
        let items: SchemaObject;
        if (field.listKind === "scalar") items = withWireEnum(withRules(scalarSchema(field.scalar), repeated?.items), field);
        else if (field.listKind === "enum") items = enumSchema(field.enum);
        else items = this.messageSchemaRef(field.message, mode);
        schema = { type: "array", items };
        if (repeated && repeated.minItems > 0n) schema.minItems = Number(repeated.minItems);
        if (repeated && repeated.maxItems > 0n) schema.maxItems = Number(repeated.maxItems);
        break;
      }
      case "map": {
        // JSON object keys are always strings, whatever the proto key type.
        // OpenAPI 3.0 has no keyword for the keys (propertyNames is 3.1): their rules are enforced, not shown.
        const map = rules?.type.case === "map" ? rules.type.value : undefined;
        let values: SchemaObject;
        if (field.mapKind === "scalar") values = withRules(scalarSchema(field.scalar), map?.values);
        else if (field.mapKind === "enum") values = enumSchema(field.enum);
        else values = this.messageSchemaRef(field.message, mode);
        schema = { type: "object", additionalProperties: values };
        if (map && map.minPairs > 0n) schema.minProperties = Number(map.minPairs);
        if (map && map.maxPairs > 0n) schema.maxProperties = Number(map.maxPairs);
        break;
      }
    }
    const singular = field.fieldKind === "scalar" || field.fieldKind === "enum" || field.fieldKind === "message";
    if (nullableIfPresence && singular && field.presence === FeatureSet_FieldPresence.EXPLICIT) {
      schema = nullable(schema);
    }
    return withDescription(schema, commentOf(field));
  }

  private componentName(message: DescMessage, mode: Mode): string {
    // Nested messages carry their parents' names to stay unique.
    const pkg = message.file.proto.package;
    const base = (pkg ? message.typeName.slice(pkg.length + 1) : message.typeName).replaceAll(".", "");
    return mode === "request" && this.inResponses.has(message.typeName) ? `${base}Input` : base;
  }

  /** True when `name` is new; throws when another message already owns it. */
  private claim(name: string, owner: string): boolean {
    const current = this.owners.get(name);
    if (current === owner) return false;
    if (current !== undefined) throw new Error(`openapi: component name ${name} used by ${current} and ${owner}`);
    this.owners.set(name, owner);
    return true;
  }
}

/**
 * Marked `(google.api.field_behavior) = REQUIRED` in the contract (the
 * Connect interceptor rejects requests without it), or proto2 `required`.
 */
function isRequiredInRequests(field: DescField): boolean {
  return (
    field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED ||
    getOption(field, field_behavior).includes(FieldBehavior.REQUIRED)
  );
}

/** A request field by its proto name, dotted for nested fields (`a.b`). */
export function fieldByPath(message: DescMessage, path: string): DescField {
  let current: DescMessage = message;
  const names = path.split(".");
  for (const [i, name] of names.entries()) {
    const field = current.fields.find((f) => f.name === name);
    if (!field) throw new Error(`openapi: ${message.typeName} has no field ${path}`);
    if (i === names.length - 1) return field;
    if (field.fieldKind !== "message") throw new Error(`openapi: ${path} of ${message.typeName} is not a message`);
    current = field.message;
  }
  throw new Error(`openapi: empty field path for ${message.typeName}`);
}

/** Schema of a path parameter: like a query parameter, but it must have one. */
export function parameterSchema(field: DescField): SchemaObject {
  const schema = queryParameterSchema(field);
  if (!schema) throw new Error(`openapi: ${field.parent.typeName}.${field.name} cannot be a path parameter`);
  return schema;
}

/** Schema of a field sent in the query (or path): scalars, enums, timestamps; never null. */
export function queryParameterSchema(field: DescField): SchemaObject | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return withRules(scalarSchema(field.scalar), fieldRulesOf(field));
    case "enum":
      return enumSchema(field.enum);
    case "message":
      return field.message.typeName === TIMESTAMP ? { type: "string", format: "date-time" } : undefined;
    default:
      return undefined;
  }
}

/** Type names of every message that appears in some answer of these services. */
function responseReachable(services: readonly DescService[]): ReadonlySet<string> {
  const seen = new Set<string>();
  const visit = (message: DescMessage): void => {
    if (seen.has(message.typeName) || wellKnownSchema(message)) return;
    seen.add(message.typeName);
    for (const field of message.fields) {
      if (getOption(field, openapi_schema) !== "") continue;
      if (field.message) visit(field.message);
    }
  };
  for (const method of services.flatMap((service) => service.methods)) {
    const binding = operationSpec(method).http;
    if (!binding) continue;
    if (binding.responseBody === "") {
      visit(method.output);
    } else {
      const message = fieldByPath(method.output, binding.responseBody).message;
      if (message) visit(message);
    }
  }
  return seen;
}

/** Schemas of well-known types: JSON forms, never components. */
function wellKnownSchema(message: DescMessage): SchemaObject | undefined {
  switch (message.typeName) {
    case TIMESTAMP:
      return { type: "string", format: "date-time" };
    case STRUCT:
      return { type: "object", additionalProperties: true };
    case VALUE:
      return {};
    case "google.protobuf.ListValue":
      return { type: "array", items: {} };
    case "google.protobuf.Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$" };
    case "google.protobuf.FieldMask":
      return { type: "string" };
    case "google.protobuf.Empty":
      return { type: "object" };
    case "google.protobuf.Any":
      return {
        type: "object",
        required: ["@type"],
        properties: { "@type": { type: "string" } },
        additionalProperties: true,
      };
  }
  // Wrappers (StringValue, Int32Value, ...) are their bare value in JSON.
  if (message.typeName.startsWith("google.protobuf.") && message.typeName.endsWith("Value")) {
    const value = message.fields[0];
    if (message.fields.length === 1 && value?.name === "value" && value.fieldKind === "scalar") {
      return scalarSchema(value.scalar);
    }
  }
  return undefined;
}

function scalarSchema(scalar: ScalarType): SchemaObject {
  switch (scalar) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", format: "byte" };
    case ScalarType.DOUBLE:
      return { type: "number", format: "double" };
    case ScalarType.FLOAT:
      return { type: "number", format: "float" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      // Does not fit int32; int64 with bounds is what generators understand.
      return { type: "integer", format: "int64", minimum: 0, maximum: 4294967295 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      // Proto JSON writes 64-bit integers as decimal strings.
      return { type: "string", format: "int64", pattern: "^-?[0-9]+$" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", format: "uint64", pattern: "^[0-9]+$" };
  }
}

/** A string field whose values are an enum's wire names (`wire_enum`, e.g. webhook events): those names as its enum. */
function withWireEnum(schema: SchemaObject, field: DescField): SchemaObject {
  const values = wireEnumValuesOf(field);
  return values && schema.type === "string" ? { ...schema, enum: [...values] } : schema;
}

/** Enum values as the REST bridge writes them (src/contract/json-codec.ts). */
function enumSchema(desc: DescEnum): SchemaObject {
  return { type: "string", enum: enumJsonValues(desc) };
}

/**
 * A scalar's schema with the bounds of its `(buf.validate.field)` rules
 * (src/contract/field-rules.ts): string lengths as minLength / maxLength,
 * 32-bit integer ranges as minimum / maximum. 64-bit integers are strings
 * in JSON, where a numeric bound has no keyword.
 */
function withRules(schema: SchemaObject, rules: FieldRules | undefined): SchemaObject {
  const type = rules?.type;
  if (type === undefined || type.case === undefined) return schema;
  if (type.case === "string" && schema.type === "string") {
    const bounded: SchemaObject = { ...schema };
    if (type.value.minLen > 0n) bounded.minLength = Number(type.value.minLen);
    if (type.value.maxLen > 0n) bounded.maxLength = Number(type.value.maxLen);
    return bounded;
  }
  if (INT32_RULES.has(type.case) && schema.type === "integer") {
    const { greaterThan, lessThan } = type.value as { greaterThan: Bound; lessThan: Bound };
    const bounded: SchemaObject = { ...schema };
    if (greaterThan.case !== undefined) {
      bounded.minimum = greaterThan.value;
      if (greaterThan.case === "gt") bounded.exclusiveMinimum = true;
    }
    if (lessThan.case !== undefined) {
      bounded.maximum = lessThan.value;
      if (lessThan.case === "lt") bounded.exclusiveMaximum = true;
    }
    return bounded;
  }
  return schema;
}

/** The rule kinds of integers JSON writes as numbers. */
const INT32_RULES: ReadonlySet<string> = new Set(["int32", "uint32", "sint32", "fixed32", "sfixed32"]);
/** One side of a range rule (`gt` / `gte`, `lt` / `lte`). */
type Bound = { case: string; value: number } | { case: undefined; value?: undefined };

/**
 * Adds `null` to the values a schema accepts (OpenAPI 3.0 has no `type: null`).
 * `nullable` only counts next to a `type` (OpenAPI 3.0.3), so a `$ref` (always
 * a message, so an object) is wrapped with `type: object`, and a schema
 * without a type (any JSON value) already admits null.
 */
function nullable(schema: SchemaObject): SchemaObject {
  if (schema.$ref !== undefined) return { type: "object", nullable: true, allOf: [schema] };
  if (schema.type === undefined) return schema;
  const result: SchemaObject = { ...schema, nullable: true };
  // With an enum, `nullable` alone does not admit null: the enum must list it.
  if (Array.isArray(schema.enum)) result.enum = [...schema.enum, null];
  return result;
}

function parseSchemaOverride(field: DescField, json: string): SchemaObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new Error(`openapi: invalid openapi_schema on ${field.parent.typeName}.${field.name}: ${String(error)}`, {
      cause: error,
    });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`openapi: openapi_schema on ${field.parent.typeName}.${field.name} is not a JSON object`);
  }
  return parsed as SchemaObject;
}
