/**
 * The OpenAPI 3.0.3 document of the JSON HTTP routes, built at run time from
 * the MailService descriptors. Routes come from the `google.api.http`
 * annotations, scopes / success statuses / rate limits from the contract
 * options (proto/mail/v1/options.proto) and schemas from the message
 * descriptors, so the document cannot drift from what the REST bridge serves:
 * nothing here repeats a path, a field or an enum value by hand.
 *
 * JSON conventions mirrored here (they are the REST bridge's):
 * - field names are the proto JSON names (`field.jsonName`);
 * - enums are strings: the value name minus the enum's UPPER_SNAKE prefix, in
 *   lower case, the `*_UNSPECIFIED` zero value never appears;
 * - singular fields with explicit presence (proto3 `optional`, every message
 *   field) are nullable and, in answers, always present (null when unset);
 * - google.protobuf.Timestamp is an RFC 3339 string, Struct a free-form
 *   object, Value any JSON value.
 */
import { STATUS_CODES } from "node:http";
import { getOption, ScalarType } from "@bufbuild/protobuf";
import type {
  DescEnum,
  DescEnumValue,
  DescField,
  DescFile,
  DescMessage,
  DescMethod,
  DescService,
  Registry,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { ErrorCodeSchema } from "../gen/mail/v1/errors_pb.js";
import { MailService } from "../gen/mail/v1/mail_pb.js";
import { max_length, openapi_schema } from "../gen/mail/v1/options_pb.js";
import { ERROR_CODES } from "../contract/api-error.ts";
import { enumJsonValues } from "../contract/json-codec.ts";
import { type OperationSpec, operationSpec } from "../contract/routes.ts";
import type { ErrorCodeName } from "../contract/api-error.ts";

// ------------------------------------------------------------------ types

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };
/** An OpenAPI 3.0 Schema Object (or a `$ref` to one). */
export type SchemaObject = JsonObject;

export type OperationObject = {
  operationId: string;
  tags: string[];
  summary?: string;
  description: string;
  parameters?: JsonObject[];
  requestBody?: JsonObject;
  responses: Record<string, JsonObject>;
  /** `[]` for public operations: there is no document-wide default. */
  security: Record<string, string[]>[];
  [extension: `x-${string}`]: JsonValue;
};

/** Path item: lower-case HTTP method to operation. */
export type PathItemObject = Record<string, OperationObject>;

export type OpenAPIV3Document = {
  openapi: "3.0.3";
  info: { title: string; version: string; description: string };
  servers?: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, SchemaObject>;
    headers: Record<string, JsonObject>;
    parameters: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
  };
};

export interface GenerateOpenApiOptions {
  /** Base address written to `servers`; omitted: relative to the document. */
  readonly serverUrl?: string;
  /**
   * Where to read `mail.v1.MailService` and `mail.v1.ErrorCode` from;
   * default the generated code. Descriptors embedded by protoc-gen-es carry no
   * source comments, so descriptions only appear with a registry built from
   * a descriptor set that kept source info (for example `buf build` output).
   */
  readonly registry?: Registry;
}

// ------------------------------------------------------------------ constants

/** The route serving this document. REST-only, so it has no RPC to derive it from. */
export const OPENAPI_JSON_PATH = "/mail/v1/openapi.json";

const SECURITY_SCHEME = "bearerAuth";
const ERROR_SCHEMA = "ErrorResponse";
const IDEMPOTENCY_KEY_PARAM = "IdempotencyKey";
/** Limit of the Idempotency-Key header (spec, Limits); not a field of any message. */
const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

const H_REQUEST_ID = "X-Request-Id";
const H_RL_LIMIT = "x-ratelimit-limit";
const H_RL_REMAINING = "x-ratelimit-remaining";
const H_RL_RESET = "x-ratelimit-reset";
const H_RETRY_AFTER = "retry-after";
const H_REPLAYED = "Idempotent-Replayed";

/**
 * Tag of an operation, by the first path segment after the version. The
 * capability names are documentation, not contract, so they live here; an
 * unknown segment falls back to its capitalized self.
 */
const TAG_BY_SEGMENT: Readonly<Record<string, string>> = {
  send: "Sending",
  messages: "Messages",
  me: "Account",
  contacts: "Contacts",
  forms: "Forms",
  conversions: "Conversions",
  "openapi.json": "Documentation",
};

/**
 * Error codes that only some operations can answer. The contract has no
 * per-method error option yet, so this is the one place where operation
 * knowledge is repeated (from the spec's "Errors" line of POST /mail/v1/send).
 */
const OPERATION_SPECIFIC_ERRORS: Readonly<Record<string, readonly ErrorCodeName[]>> = {
  SendMessage: ["INSUFFICIENT_CREDITS", "SENDER_NOT_VERIFIED"],
};

// ------------------------------------------------------------------ entry point

/** Builds the OpenAPI document. Pure: a new object on every call. */
export function generateOpenApi(options: GenerateOpenApiOptions = {}): OpenAPIV3Document {
  const service = options.registry ? options.registry.getService(MailService.typeName) : MailService;
  const errorEnum = options.registry ? options.registry.getEnum(ErrorCodeSchema.typeName) : ErrorCodeSchema;
  if (!service || !errorEnum) throw new Error("openapi: the registry lacks mail.v1.MailService or mail.v1.ErrorCode");
  const schemas = new SchemaRegistry(service);
  const paths: Record<string, PathItemObject> = {};
  const tags: string[] = [];

  const addOperation = (path: string, method: string, operation: OperationObject): void => {
    const item = (paths[path] ??= {});
    if (item[method]) throw new Error(`openapi: two operations for ${method.toUpperCase()} ${path}`);
    item[method] = operation;
    for (const tag of operation.tags) if (!tags.includes(tag)) tags.push(tag);
  };

  for (const method of service.methods) {
    // The same reading of the contract as the REST bridge: what it serves is what is documented.
    const operation = operationSpec(method);
    if (!operation.http) continue; // gRPC/Connect only: not on the JSON routes.
    const route: Route = {
      method: operation.http.verb,
      path: operation.http.pathTemplate,
      pathFields: operation.http.pathParams,
    };
    addOperation(route.path, route.method, buildOperation(operation, route, schemas, errorEnum));
  }
  addOperation(OPENAPI_JSON_PATH, "get", openApiJsonOperation(errorEnum));

  schemas.define(ERROR_SCHEMA, errorResponseSchema());

  const doc: OpenAPIV3Document = {
    openapi: "3.0.3",
    info: {
      title: "Transactional Mail API",
      version: "v1",
      description: commentOf(service) ?? DEFAULT_DESCRIPTION,
    },
    ...(options.serverUrl !== undefined ? { servers: [{ url: options.serverUrl }] } : {}),
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      schemas: schemas.all(),
      headers: headerComponents(),
      parameters: {
        [IDEMPOTENCY_KEY_PARAM]: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "Makes the POST safe to retry: a retry with the same key and body returns the first answer " +
            "(with `Idempotent-Replayed: true`); the same key with another body answers 409 IDEMPOTENCY_CONFLICT.",
          schema: { type: "string", maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
        },
      },
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <API_KEY>`. Each operation needs the scope named in its `x-required-scope`.",
        },
      },
    },
  };
  return doc;
}

const DEFAULT_DESCRIPTION =
  "Transactional mail: send, read the message log, contacts, forms and conversions. " +
  "Field names are camelCase; enum values are lower-case strings (`queued`); optional fields " +
  "and objects are always present in answers and `null` when unset; date-times are ISO 8601 UTC.";

// ------------------------------------------------------------------ routes

interface Route {
  readonly method: string;
  /** OpenAPI path, `{name}` placeholders only. */
  readonly path: string;
  /** Request field names (proto names, dotted for nested) bound to the path. */
  readonly pathFields: readonly string[];
}

function tagOf(path: string): string {
  const segments = path.split("/").filter((s) => s !== "");
  const version = segments.findIndex((s) => /^v\d+/.test(s));
  const segment = segments[version + 1] ?? segments[0] ?? "default";
  return TAG_BY_SEGMENT[segment] ?? segment.charAt(0).toUpperCase() + segment.slice(1);
}

function buildOperation(
  spec: OperationSpec,
  route: Route,
  schemas: SchemaRegistry,
  errorEnum: DescEnum,
): OperationObject {
  const { method, scope, successStatus } = spec;
  const operationId = method.name;
  const rateLimit = spec.rateLimitPerMinute;
  const authenticated = scope !== "";
  const input = method.input;

  const parameters: JsonObject[] = [];
  for (const name of route.pathFields) {
    const field = fieldByPath(input, name);
    parameters.push(
      withDescription({ name, in: "path", required: true, schema: parameterSchema(field) }, commentOf(field)),
    );
  }

  const body = spec.http?.body ?? "";
  let requestBody: JsonObject | undefined;
  if (body !== "") {
    requestBody = {
      required: true,
      content: { "application/json": { schema: requestBodySchema(input, body, route.pathFields, schemas) } },
    };
  }
  if (body !== "*") {
    // google.api.http: without `body: "*"`, every top-level field bound neither
    // to the path nor to the body is a query parameter.
    for (const field of input.fields) {
      if (route.pathFields.includes(field.name) || field.name === body) continue;
      const schema = queryParameterSchema(field);
      if (!schema) continue; // Lists, maps and objects cannot travel in a query.
      parameters.push(
        withDescription({ name: field.jsonName, in: "query", required: false, schema }, commentOf(field)),
      );
    }
  }
  // The idempotency layer of the bridge wraps every POST, body or not.
  const idempotent = route.method === "post";
  if (idempotent) parameters.push({ $ref: `#/components/parameters/${IDEMPOTENCY_KEY_PARAM}` });

  const successSchema = responseSchema(method, spec.http?.responseBody ?? "", schemas);
  const responses: Record<string, JsonObject> = {
    [String(successStatus)]: {
      description: reasonPhrase(successStatus),
      headers: responseHeaders({ authenticated, status: successStatus, replayable: idempotent }),
      content: { "application/json": { schema: successSchema } },
    },
  };
  const errors = errorCodesFor(method.name, {
    authenticated,
    hasInput: route.pathFields.length > 0 || requestBody !== undefined || parameters.some((p) => p.in === "query"),
    hasBody: requestBody !== undefined,
    idempotent,
    hasPathParams: route.pathFields.length > 0,
  });
  for (const [status, codes] of errors) {
    responses[String(status)] = errorResponse(status, codes, authenticated, errorEnum);
  }

  const comment = commentOf(method);
  const notes: string[] = [];
  if (comment) notes.push(comment);
  notes.push(authenticated ? `Requires an API key with scope \`${scope}\`.` : "No authentication.");
  if (rateLimit > 0) notes.push(`Rate limit: ${rateLimit} requests per minute per API key.`);

  // Built in reading order: JSON keeps insertion order, and people read this.
  const operation: OperationObject = {
    operationId,
    tags: [tagOf(route.path)],
    ...(comment ? { summary: firstSentence(comment) } : {}),
    description: notes.join("\n\n"),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    security: authenticated ? [{ [SECURITY_SCHEME]: [] }] : [],
  };
  if (authenticated) operation["x-required-scope"] = scope;
  if (rateLimit > 0) operation["x-rate-limit-per-minute"] = rateLimit;
  return operation;
}

function openApiJsonOperation(errorEnum: DescEnum): OperationObject {
  return {
    operationId: "GetOpenApiDocument",
    tags: [tagOf(OPENAPI_JSON_PATH)],
    summary: "This OpenAPI 3.0 document.",
    description: "No authentication.",
    security: [],
    responses: {
      "200": {
        description: reasonPhrase(200),
        headers: responseHeaders({ authenticated: false, status: 200, replayable: false }),
        content: { "application/json": { schema: { type: "object", additionalProperties: true } } },
      },
      ...Object.fromEntries(
        errorCodesFor(undefined, {
          authenticated: false,
          hasInput: false,
          hasBody: false,
          idempotent: false,
          hasPathParams: false,
        }).map(([status, codes]) => [String(status), errorResponse(status, codes, false, errorEnum)]),
      ),
    },
  };
}

/** A request field by its proto name, dotted for nested fields (`a.b`). */
function fieldByPath(message: DescMessage, path: string): DescField {
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

function requestBodySchema(
  input: DescMessage,
  body: string,
  pathFields: readonly string[],
  schemas: SchemaRegistry,
): SchemaObject {
  if (body !== "*") return schemas.fieldSchema(fieldByPath(input, body), "request", false);
  const topLevelPathFields = pathFields.filter((p) => !p.includes("."));
  if (topLevelPathFields.length === 0) return schemas.messageSchemaRef(input, "request");
  // Path-bound fields are not part of the body: an inline object without them.
  return schemas.objectSchema(input, "request", topLevelPathFields);
}

function responseSchema(method: DescMethod, responseBody: string, schemas: SchemaRegistry): SchemaObject {
  if (responseBody === "") return schemas.messageSchemaRef(method.output, "response");
  const field = fieldByPath(method.output, responseBody);
  // The answer *is* the field's value, so it is never null at the top.
  return schemas.fieldSchema(field, "response", false);
}

// ------------------------------------------------------------------ errors and headers

interface OperationTraits {
  readonly authenticated: boolean;
  readonly hasInput: boolean;
  readonly hasBody: boolean;
  readonly idempotent: boolean;
  readonly hasPathParams: boolean;
}

/**
 * The error codes an operation can answer, grouped by the HTTP status the
 * contract declares for each (errors.proto), ascending.
 */
function errorCodesFor(rpcName: string | undefined, traits: OperationTraits): [number, ErrorCodeName[]][] {
  const possible = new Set<ErrorCodeName>(["INTERNAL_ERROR"]);
  if (traits.authenticated) {
    for (const code of [
      "AUTHENTICATION_REQUIRED",
      "API_KEY_INVALID",
      "API_KEY_EXPIRED",
      "FORBIDDEN",
      "FEATURE_NOT_ENTITLED",
      "RATE_LIMITED",
      // Every authenticated call reads the database (key lookup).
      "UNAVAILABLE",
    ] as const) {
      possible.add(code);
    }
  }
  if (traits.hasInput) possible.add("VALIDATION_ERROR");
  // A path id, or a body naming other records (template, sender, list, contact).
  if (traits.hasPathParams || traits.hasBody) possible.add("NOT_FOUND");
  if (traits.hasBody) possible.add("PAYLOAD_TOO_LARGE");
  if (traits.idempotent) possible.add("IDEMPOTENCY_CONFLICT");
  for (const code of (rpcName !== undefined ? OPERATION_SPECIFIC_ERRORS[rpcName] : undefined) ?? []) {
    possible.add(code);
  }

  const byStatus = new Map<number, ErrorCodeName[]>();
  // ERROR_CODES is in contract order, which keeps each list stable.
  for (const [name, spec] of ERROR_CODES) {
    if (!possible.has(name)) continue;
    const list = byStatus.get(spec.httpStatus) ?? [];
    list.push(name);
    byStatus.set(spec.httpStatus, list);
  }
  return [...byStatus.entries()].sort(([a], [b]) => a - b);
}

function errorResponse(
  status: number,
  codes: readonly ErrorCodeName[],
  authenticated: boolean,
  errorEnum: DescEnum,
): JsonObject {
  const lines = codes.map((code) => {
    const value = errorEnum.values.find((v) => v.name === `ERROR_CODE_${code}`);
    const description = value ? commentOf(value) : undefined;
    return description ? `- \`${code}\`: ${description}` : `- \`${code}\``;
  });
  const response: JsonObject = {
    description: `${reasonPhrase(status)}. Error codes:\n${lines.join("\n")}`,
    headers: responseHeaders({ authenticated, status, replayable: false }),
    content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
    "x-error-codes": [...codes],
  };
  return response;
}

function errorResponseSchema(): SchemaObject {
  return {
    type: "object",
    description:
      "Every error answer. Branch on `error.code`; `error.message` is for humans and may change.",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: {
          code: { type: "string", enum: [...ERROR_CODES.keys()] },
          message: { type: "string" },
        },
      },
    },
  };
}

function headerRef(name: string): JsonObject {
  return { $ref: `#/components/headers/${name}` };
}

function responseHeaders(opts: { authenticated: boolean; status: number; replayable: boolean }): JsonObject {
  const headers: JsonObject = { [H_REQUEST_ID]: headerRef(H_REQUEST_ID) };
  if (opts.authenticated) {
    headers[H_RL_LIMIT] = headerRef(H_RL_LIMIT);
    headers[H_RL_REMAINING] = headerRef(H_RL_REMAINING);
    headers[H_RL_RESET] = headerRef(H_RL_RESET);
  }
  if (opts.status === 429) headers[H_RETRY_AFTER] = headerRef(H_RETRY_AFTER);
  if (opts.replayable && opts.status < 300) headers[H_REPLAYED] = headerRef(H_REPLAYED);
  return headers;
}

function headerComponents(): Record<string, JsonObject> {
  const rateLimitNote = "Present once the API key is known (rate limits are per key).";
  return {
    [H_REQUEST_ID]: {
      description: "Identifies the request in the service's logs; quote it when reporting a problem.",
      required: true,
      schema: { type: "string" },
    },
    [H_RL_LIMIT]: {
      description: `Requests allowed per minute for this key and operation. ${rateLimitNote}`,
      schema: { type: "integer", minimum: 0 },
    },
    [H_RL_REMAINING]: {
      description: `Requests left in the current window. ${rateLimitNote}`,
      schema: { type: "integer", minimum: 0 },
    },
    [H_RL_RESET]: {
      description: `Seconds until the current window resets. ${rateLimitNote}`,
      schema: { type: "integer", minimum: 0 },
    },
    [H_RETRY_AFTER]: {
      description: "Seconds to wait before retrying (with the same idempotency key).",
      required: true,
      schema: { type: "integer", minimum: 0 },
    },
    [H_REPLAYED]: {
      description: "`true` when the answer is the stored answer of an earlier call with the same Idempotency-Key.",
      schema: { type: "boolean" },
    },
  };
}

function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? `HTTP ${status}`;
}

// ------------------------------------------------------------------ schemas

/**
 * `request` schemas describe what a caller may send (nothing is required
 * unless the proto says so); `response` schemas describe answers, where every
 * field is always present.
 */
type Mode = "request" | "response";

const TIMESTAMP = "google.protobuf.Timestamp";
const STRUCT = "google.protobuf.Struct";
const VALUE = "google.protobuf.Value";

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

/** Enum values as the REST bridge writes them (src/contract/json-codec.ts). */
function enumSchema(desc: DescEnum): SchemaObject {
  return { type: "string", enum: enumJsonValues(desc) };
}

function parameterSchema(field: DescField): SchemaObject {
  const schema = queryParameterSchema(field);
  if (!schema) throw new Error(`openapi: ${field.parent.typeName}.${field.name} cannot be a path parameter`);
  return schema;
}

/** Schema of a field sent in the query (or path): scalars, enums, timestamps; never null. */
function queryParameterSchema(field: DescField): SchemaObject | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return withMaxLength(scalarSchema(field.scalar), field);
    case "enum":
      return enumSchema(field.enum);
    case "message":
      return field.message.typeName === TIMESTAMP ? { type: "string", format: "date-time" } : undefined;
    default:
      return undefined;
  }
}

function withMaxLength(schema: SchemaObject, field: DescField): SchemaObject {
  const max = getOption(field, max_length);
  return max > 0 && schema.type === "string" ? { ...schema, maxLength: max } : schema;
}

function withDescription(object: JsonObject, description: string | undefined): JsonObject {
  if (!description || object.description !== undefined) return object;
  // A `$ref` ignores its siblings in OpenAPI 3.0: wrap it so the text shows.
  if (object.$ref !== undefined) return { allOf: [object], description };
  return { ...object, description };
}

/** Adds `null` to the values a schema accepts (OpenAPI 3.0 has no `type: null`). */
function nullable(schema: SchemaObject): SchemaObject {
  if (schema.$ref !== undefined) return { nullable: true, allOf: [schema] };
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

/**
 * The message schemas of `components.schemas`. A message used in both
 * requests and answers gets two components: `Name` (answer: every field
 * required) and `NameInput` (request: nothing required), because OpenAPI 3.0
 * cannot say "required only in answers" otherwise.
 */
class SchemaRegistry {
  private readonly schemas = new Map<string, SchemaObject>();
  /** Component name -> `typeName/mode` that owns it, to catch name clashes. */
  private readonly owners = new Map<string, string>();
  private readonly inResponses: ReadonlySet<string>;

  constructor(service: DescService) {
    this.inResponses = responseReachable(service);
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
      if (mode === "response" || field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED) {
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

    let schema: SchemaObject;
    switch (field.fieldKind) {
      case "scalar":
        schema = withMaxLength(scalarSchema(field.scalar), field);
        break;
      case "enum":
        schema = enumSchema(field.enum);
        break;
      case "message":
        schema = this.messageSchemaRef(field.message, mode);
        break;
      case "list": {
        let items: SchemaObject;
        if (field.listKind === "scalar") items = withMaxLength(scalarSchema(field.scalar), field);
        else if (field.listKind === "enum") items = enumSchema(field.enum);
        else items = this.messageSchemaRef(field.message, mode);
        schema = { type: "array", items };
        break;
      }
      case "map": {
        // JSON object keys are always strings, whatever the proto key type.
        let values: SchemaObject;
        if (field.mapKind === "scalar") values = withMaxLength(scalarSchema(field.scalar), field);
        else if (field.mapKind === "enum") values = enumSchema(field.enum);
        else values = this.messageSchemaRef(field.message, mode);
        schema = { type: "object", additionalProperties: values };
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

/** Type names of every message that appears in some answer. */
function responseReachable(service: DescService): ReadonlySet<string> {
  const seen = new Set<string>();
  const visit = (message: DescMessage): void => {
    if (seen.has(message.typeName) || wellKnownSchema(message)) return;
    seen.add(message.typeName);
    for (const field of message.fields) {
      if (getOption(field, openapi_schema) !== "") continue;
      if (field.message) visit(field.message);
    }
  };
  for (const method of service.methods) {
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

// ------------------------------------------------------------------ comments

type CommentedDesc = DescService | DescMethod | DescMessage | DescField | DescEnum | DescEnumValue;

/**
 * The leading comment of an element in its .proto source, or undefined.
 * protoc-gen-es strips `source_code_info` from the descriptors it embeds, so
 * with the generated MailService this is always undefined; it answers only
 * for descriptors loaded from a descriptor set that kept source info.
 */
function commentOf(desc: CommentedDesc): string | undefined {
  const file = fileOf(desc);
  const locations = file.proto.sourceCodeInfo?.location;
  if (!locations || locations.length === 0) return undefined;
  const path = sourcePath(desc);
  const location = locations.find(
    (l) => l.path.length === path.length && l.path.every((segment, i) => segment === path[i]),
  );
  const text = location?.leadingComments
    ?.split("\n")
    .map((line) => line.trim())
    .join("\n")
    .trim();
  return text ? text : undefined;
}

function fileOf(desc: CommentedDesc): DescFile {
  switch (desc.kind) {
    case "service":
    case "message":
    case "enum":
      return desc.file;
    case "rpc":
    case "field":
    case "enum_value":
      return desc.parent.file;
  }
}

// Field numbers in descriptor.proto, which source_code_info paths are made of.
const FILE_MESSAGE_TYPE = 4;
const FILE_ENUM_TYPE = 5;
const FILE_SERVICE = 6;
const MESSAGE_FIELD = 2;
const MESSAGE_NESTED_TYPE = 3;
const MESSAGE_ENUM_TYPE = 4;
const ENUM_VALUE = 2;
const SERVICE_METHOD = 2;

function sourcePath(desc: CommentedDesc): number[] {
  switch (desc.kind) {
    case "service":
      return [FILE_SERVICE, desc.file.proto.service.indexOf(desc.proto)];
    case "rpc":
      return [...sourcePath(desc.parent), SERVICE_METHOD, desc.parent.proto.method.indexOf(desc.proto)];
    case "message":
      return desc.parent
        ? [...sourcePath(desc.parent), MESSAGE_NESTED_TYPE, desc.parent.proto.nestedType.indexOf(desc.proto)]
        : [FILE_MESSAGE_TYPE, desc.file.proto.messageType.indexOf(desc.proto)];
    case "field":
      return [...sourcePath(desc.parent), MESSAGE_FIELD, desc.parent.proto.field.indexOf(desc.proto)];
    case "enum":
      return desc.parent
        ? [...sourcePath(desc.parent), MESSAGE_ENUM_TYPE, desc.parent.proto.enumType.indexOf(desc.proto)]
        : [FILE_ENUM_TYPE, desc.file.proto.enumType.indexOf(desc.proto)];
    case "enum_value":
      return [...sourcePath(desc.parent), ENUM_VALUE, desc.parent.proto.value.indexOf(desc.proto)];
  }
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const match = /^(.+?\.)(\s|$)/.exec(flat);
  return match?.[1] ?? flat;
}
