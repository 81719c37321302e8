/**
 * The OpenAPI 3.0.3 document of the JSON HTTP routes, built at run time from
 * the descriptors of every public service (publicServices below: MailService,
 * WebhooksService, and any later one with JSON routes). Routes come from the `google.api.http`
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
 *
 * The parts: schemas.ts (components.schemas), operations.ts (paths),
 * errors.ts (error answers), headers.ts (response headers), comments.ts
 * (proto comments as descriptions).
 */
import { type DescEnum, type DescService, getOption, type Registry } from "@bufbuild/protobuf";
import { ErrorCodeSchema } from "../gen/mail/v1/errors_pb.js";
import { MailService } from "../gen/mail/v1/mail_pb.js";
import { operator_only } from "../gen/mail/v1/options_pb.js";
import { operationSpec } from "../contract/routes.ts";
import { contractRegistry } from "./descriptor-set.ts";
import { commentOf } from "./comments.ts";
import { ERROR_SCHEMA, errorResponses, errorResponseSchema } from "./errors.ts";
import { headerComponents, reasonPhrase, responseHeaders } from "./headers.ts";
import { buildOperation, parameterComponents, securitySchemeComponents, tagOf } from "./operations.ts";
import { SchemaRegistry } from "./schemas.ts";
import type { OpenAPIV3Document, OperationObject, PathItemObject } from "./types.ts";

export type {
  JsonObject,
  JsonValue,
  OpenAPIV3Document,
  OperationObject,
  PathItemObject,
  SchemaObject,
} from "./types.ts";

export interface GenerateOpenApiOptions {
  /** Base address written to `servers`; default `/`, the host serving the document. */
  readonly serverUrl?: string;
  /**
   * Where to read the services and `mail.v1.ErrorCode` from; default the
   * contract's descriptors without their comments (contractRegistry), as
   * protoc-gen-es embeds them. Descriptions only appear with a registry
   * built from a descriptor set that kept source info (documentedRegistry,
   * or `buf build` output).
   */
  readonly registry?: Registry;
}

/** The route serving this document. REST-only, so it has no RPC to derive it from. */
export const OPENAPI_JSON_PATH = "/mail/v1/openapi.json";

const DEFAULT_DESCRIPTION =
  "Transactional mail: send, read the message log, contacts, forms and conversions; webhook endpoints and deliveries. " +
  "Field names are camelCase; enum values are lower-case strings (`queued`); optional fields " +
  "and objects are always present in answers and `null` when unset; date-times are ISO 8601 UTC.";

/** The package of the contract: services of other packages (imported ones) are never documented. */
const CONTRACT_PACKAGE = "mail.v1";

/**
 * The services on the public JSON routes: every service of the contract with
 * at least one `google.api.http` binding, except the operator-only ones
 * (AdminService, EventsService), which are gRPC/Connect only. MailService
 * first, then the others by name, so the document reads in a stable order.
 */
export function publicServices(registry: Registry): DescService[] {
  const services: DescService[] = [];
  for (const type of registry) {
    if (type.kind !== "service" || !type.typeName.startsWith(`${CONTRACT_PACKAGE}.`)) continue;
    if (getOption(type, operator_only)) continue;
    if (type.methods.some((method) => operationSpec(method).http !== undefined)) services.push(type);
  }
  const rank = (service: DescService): string => (service.typeName === MailService.typeName ? "" : service.typeName);
  return services.sort((a, b) => rank(a).localeCompare(rank(b)));
}

/** Builds the OpenAPI document. Pure: a new object on every call. */
export function generateOpenApi(options: GenerateOpenApiOptions = {}): OpenAPIV3Document {
  const registry = options.registry ?? contractRegistry();
  const services = publicServices(registry);
  const errorEnum = registry.getEnum(ErrorCodeSchema.typeName);
  const mail = services.find((service) => service.typeName === MailService.typeName);
  if (!mail || !errorEnum) throw new Error("openapi: the registry lacks mail.v1.MailService or mail.v1.ErrorCode");
  const schemas = new SchemaRegistry(services);
  const paths: Record<string, PathItemObject> = {};
  const tags: string[] = [];

  const addOperation = (path: string, method: string, operation: OperationObject): void => {
    const item = (paths[path] ??= {});
    if (item[method]) throw new Error(`openapi: two operations for ${method.toUpperCase()} ${path}`);
    item[method] = operation;
    for (const tag of operation.tags) if (!tags.includes(tag)) tags.push(tag);
  };

  for (const method of services.flatMap((service) => service.methods)) {
    // The same reading of the contract as the REST bridge: what it serves is what is documented.
    const operation = operationSpec(method);
    if (!operation.http) continue; // gRPC/Connect only: not on the JSON routes.
    const route = operation.http;
    addOperation(route.pathTemplate, route.verb, buildOperation(operation, route, schemas, errorEnum));
  }
  addOperation(OPENAPI_JSON_PATH, "get", openApiJsonOperation(errorEnum));

  schemas.define(ERROR_SCHEMA, errorResponseSchema());

  return {
    openapi: "3.0.3",
    info: {
      title: "Transactional Mail API",
      version: "v1",
      description: commentOf(mail) ?? DEFAULT_DESCRIPTION,
    },
    // Paths are absolute (`/mail/v1/...`): by default the server is the root
    // of the host serving the document.
    servers: [{ url: options.serverUrl ?? "/" }],
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      schemas: schemas.all(),
      headers: headerComponents(),
      parameters: parameterComponents(),
      securitySchemes: securitySchemeComponents(),
    },
  };
}

/** GET /mail/v1/openapi.json itself: public, no input. */
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
      ...errorResponses(
        undefined,
        { authenticated: false, hasInput: false, hasBody: false, idempotent: false, hasPathParams: false },
        errorEnum,
      ),
    },
  };
}
