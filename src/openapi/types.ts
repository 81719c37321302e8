/** The shapes of the OpenAPI 3.0.3 document this package writes. */

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
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, SchemaObject>;
    headers: Record<string, JsonObject>;
    parameters: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
  };
};
