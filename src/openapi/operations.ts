/**
 * One OpenAPI operation per RPC with a `google.api.http` binding: its path
 * and query parameters, request body, answers, security and extensions, read
 * the same way the REST bridge reads them (src/contract/routes.ts).
 */
import type { DescEnum, DescMessage, DescMethod } from "@bufbuild/protobuf";
import type { HttpBinding, OperationSpec } from "../contract/routes.ts";
import { commentOf, firstSentence, withDescription } from "./comments.ts";
import { errorResponses } from "./errors.ts";
import { reasonPhrase, responseHeaders } from "./headers.ts";
import { fieldByPath, parameterSchema, queryParameterSchema, type SchemaRegistry } from "./schemas.ts";
import type { JsonObject, OperationObject, SchemaObject } from "./types.ts";

export const SECURITY_SCHEME = "bearerAuth";
/** A member's session: the cookie the administration screen holds. */
export const SESSION_SECURITY_SCHEME = "memberSession";
const IDEMPOTENCY_KEY_PARAM = "IdempotencyKey";
/** Limit of the Idempotency-Key header (spec, Limits); not a field of any message. */
const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

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

export function tagOf(path: string): string {
  const segments = path.split("/").filter((s) => s !== "");
  const version = segments.findIndex((s) => /^v\d+/.test(s));
  const segment = segments[version + 1] ?? segments[0] ?? "default";
  return TAG_BY_SEGMENT[segment] ?? segment.charAt(0).toUpperCase() + segment.slice(1);
}

/** `components.parameters`: the Idempotency-Key header every POST takes. */
export function parameterComponents(): Record<string, JsonObject> {
  return {
    [IDEMPOTENCY_KEY_PARAM]: {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "Makes the POST safe to retry: a retry with the same key and body returns the first answer " +
        "(with `Idempotent-Replayed: true`); the same key with another body answers 409 IDEMPOTENCY_CONFLICT.",
      schema: { type: "string", maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
    },
  };
}

/** `components.securitySchemes`: the API key as a bearer token. */
export function securitySchemeComponents(): Record<string, JsonObject> {
  return {
    [SECURITY_SCHEME]: {
      type: "http",
      scheme: "bearer",
      description: "`Authorization: Bearer <API_KEY>`. Each operation needs the scope named in its `x-required-scope`.",
    },
    [SESSION_SECURITY_SCHEME]: {
      type: "apiKey",
      in: "cookie",
      name: "__Host-mail_session",
      description:
        "A company member's session, from a one-time sign-in link (SessionService.ExchangeSignInLink). Sent by the browser; " +
        "every call also needs `Connect-Protocol-Version: 1` and the service's own `Origin`. The member's role grants the scopes.",
    },
  };
}

/** The operation of an RPC on its HTTP route. */
export function buildOperation(
  spec: OperationSpec,
  route: HttpBinding,
  schemas: SchemaRegistry,
  errorEnum: DescEnum,
): OperationObject {
  const { method, scope, successStatus } = spec;
  const operationId = method.name;
  const rateLimit = spec.rateLimitPerMinute;
  const authenticated = scope !== "";
  const input = method.input;
  const pathFields = route.pathParams;

  const parameters: JsonObject[] = [];
  for (const name of pathFields) {
    const field = fieldByPath(input, name);
    parameters.push(
      withDescription({ name, in: "path", required: true, schema: parameterSchema(field) }, commentOf(field)),
    );
  }

  const body = route.body;
  let requestBody: JsonObject | undefined;
  if (body !== "") {
    requestBody = {
      required: true,
      content: { "application/json": { schema: requestBodySchema(input, body, pathFields, schemas) } },
    };
  }
  if (body !== "*") {
    // google.api.http: without `body: "*"`, every top-level field bound neither
    // to the path nor to the body is a query parameter.
    for (const field of input.fields) {
      if (pathFields.includes(field.name) || field.name === body) continue;
      const schema = queryParameterSchema(field);
      if (!schema) continue; // Lists, maps and objects cannot travel in a query.
      parameters.push(
        withDescription({ name: field.jsonName, in: "query", required: false, schema }, commentOf(field)),
      );
    }
  }
  // The idempotency layer of the bridge wraps every POST, body or not.
  const idempotent = route.verb === "post";
  if (idempotent) parameters.push({ $ref: `#/components/parameters/${IDEMPOTENCY_KEY_PARAM}` });

  const responses: Record<string, JsonObject> = {
    [String(successStatus)]: {
      description: reasonPhrase(successStatus),
      headers: responseHeaders({ authenticated, status: successStatus, replayable: idempotent }),
      content: { "application/json": { schema: responseSchema(method, route.responseBody, schemas) } },
    },
    ...errorResponses(
      method.name,
      {
        authenticated,
        hasInput: pathFields.length > 0 || requestBody !== undefined || parameters.some((p) => p.in === "query"),
        hasBody: requestBody !== undefined,
        idempotent,
        hasPathParams: pathFields.length > 0,
      },
      errorEnum,
    ),
  };

  const comment = commentOf(method);
  const notes: string[] = [];
  if (comment) notes.push(comment);
  const refusesKeys = spec.access.kind === "key" && !spec.access.apiKeys;
  notes.push(
    !authenticated
      ? "No authentication."
      : refusesKeys
        ? `Requires scope \`${scope}\` held by a member session of an owner or admin (the \`__Host-mail_session\` cookie, with \`Connect-Protocol-Version: 1\` and the service's own Origin); API keys are refused with 403 FORBIDDEN.`
        : `Requires an API key with scope \`${scope}\`.`,
  );
  if (rateLimit > 0) notes.push(`Rate limit: ${rateLimit} requests per minute per API key.`);

  // Built in reading order: JSON keeps insertion order, and people read this.
  const operation: OperationObject = {
    operationId,
    tags: [tagOf(route.pathTemplate)],
    ...(comment ? { summary: firstSentence(comment) } : {}),
    description: notes.join("\n\n"),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    security: !authenticated ? [] : [{ [refusesKeys ? SESSION_SECURITY_SCHEME : SECURITY_SCHEME]: [] }],
  };
  if (authenticated) operation["x-required-scope"] = scope;
  if (refusesKeys) operation["x-api-keys-refused"] = true;
  if (rateLimit > 0) operation["x-rate-limit-per-minute"] = rateLimit;
  return operation;
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
