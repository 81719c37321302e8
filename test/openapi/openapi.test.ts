import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileRegistry, createRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/contract/api-error.ts";
import { operationsOf } from "../../src/contract/routes.ts";
import { file_mail_v1_admin } from "../../src/gen/mail/v1/admin_pb.js";
import { file_mail_v1_events } from "../../src/gen/mail/v1/events_pb.js";
import { file_mail_v1_mail, MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { file_mail_v1_webhooks } from "../../src/gen/mail/v1/webhooks_pb.js";
import { documentedRegistry } from "../../src/openapi/descriptor-set.ts";
import { generateOpenApi, OPENAPI_JSON_PATH, publicServices } from "../../src/openapi/document.ts";
import type { OpenAPIV3Document, OperationObject } from "../../src/openapi/document.ts";

/** The endpoint table of the spec (mail-api-and-webhooks.md, "Endpoints"). */
const SPEC_ROUTES = [
  { method: "post", path: "/mail/v1/send", scope: "mail.transactional.send" },
  { method: "get", path: "/mail/v1/messages/{id}", scope: "mail.events.read" },
  { method: "get", path: "/mail/v1/messages", scope: "mail.events.read" },
  { method: "get", path: "/mail/v1/me", scope: "mail.events.read" },
  { method: "get", path: "/mail/v1/contacts", scope: "mail.contacts.read" },
  { method: "get", path: "/mail/v1/contacts/{id}", scope: "mail.contacts.read" },
  { method: "post", path: "/mail/v1/contacts", scope: "mail.contacts.write" },
  { method: "get", path: "/mail/v1/forms", scope: "mail.events.read" },
  { method: "post", path: "/mail/v1/conversions", scope: "mail.conversions.write" },
  { method: "get", path: "/mail/v1/openapi.json", scope: undefined },
] as const;

/**
 * The WebhooksService routes (scope mail.admin): the spec leaves the paths
 * of the webhook screens unstated; these are the contract's
 * (proto/mail/v1/webhooks.proto).
 */
const WEBHOOK_ROUTES = [
  { method: "post", path: "/mail/v1/webhooks", scope: "mail.admin" },
  { method: "get", path: "/mail/v1/webhooks", scope: "mail.admin" },
  { method: "get", path: "/mail/v1/webhooks/{id}", scope: "mail.admin" },
  { method: "patch", path: "/mail/v1/webhooks/{id}", scope: "mail.admin" },
  { method: "delete", path: "/mail/v1/webhooks/{id}", scope: "mail.admin" },
  { method: "post", path: "/mail/v1/webhooks/{id}/rotate-secret", scope: "mail.admin" },
  { method: "get", path: "/mail/v1/webhooks/deliveries", scope: "mail.admin" },
  { method: "get", path: "/mail/v1/webhooks/deliveries/{id}", scope: "mail.admin" },
  { method: "post", path: "/mail/v1/webhooks/deliveries/{id}/retry", scope: "mail.admin" },
  { method: "post", path: "/mail/v1/webhooks/{id}/retry-dead-letters", scope: "mail.admin" },
] as const;

/**
 * The other services of the company's Mail administrators (scope
 * mail.admin): contact lists, sign-up forms (create, deactivate; the list
 * stays GET /mail/v1/forms) and the revenue report. Paths not in the spec:
 * the contract's (lists.proto, forms.proto, reports.proto).
 */
const COMPANY_ADMIN_ROUTES = [
  { method: "post", path: "/mail/v1/lists", scope: "mail.admin" },
  { method: "get", path: "/mail/v1/lists", scope: "mail.admin" },
  { method: "patch", path: "/mail/v1/lists/{id}", scope: "mail.admin" },
  { method: "delete", path: "/mail/v1/lists/{id}", scope: "mail.admin" },
  { method: "post", path: "/mail/v1/forms", scope: "mail.admin" },
  { method: "post", path: "/mail/v1/forms/{public_id}/deactivate", scope: "mail.admin" },
  { method: "get", path: "/mail/v1/reports/revenue-by-campaign", scope: "mail.admin" },
] as const;

/** Every documented route with a scope table entry. */
const ALL_ROUTES = [...SPEC_ROUTES, ...WEBHOOK_ROUTES, ...COMPANY_ADMIN_ROUTES];

const doc = generateOpenApi({ serverUrl: "https://mail.example.test" });

/** Walks a JSON value; undefined as soon as a step is missing. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function operation(document: OpenAPIV3Document, method: string, path: string): OperationObject {
  const op = document.paths[path]?.[method];
  if (!op) throw new Error(`no ${method.toUpperCase()} ${path}`);
  return op;
}

function schema(name: string): unknown {
  return doc.components.schemas[name];
}

async function expectValid(document: OpenAPIV3Document): Promise<void> {
  const result = await new Validator().validate(document);
  if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
  expect(result.valid).toBe(true);
}

describe("generated OpenAPI document", () => {
  it("is a valid OpenAPI 3.0 document", async () => {
    expect(doc.openapi).toBe("3.0.3");
    expect(doc.info).toMatchObject({ title: "Transactional Mail API", version: "v1" });
    expect(doc.servers).toEqual([{ url: "https://mail.example.test" }]);
    await expectValid(doc);
  });

  it("serves relative to the host of the document without a serverUrl", () => {
    // The paths are absolute (`/mail/v1/...`), so the server is the host root.
    expect(generateOpenApi({}).servers).toEqual([{ url: "/" }]);
  });

  it("has every $ref pointing at an existing component", () => {
    const refs = new Set<string>();
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (typeof value === "object" && value !== null) {
        for (const [key, child] of Object.entries(value)) {
          if (key === "$ref" && typeof child === "string") refs.add(child);
          else walk(child);
        }
      }
    };
    walk(doc);
    expect(refs.size).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref.startsWith("#/components/")).toBe(true);
      expect(at(doc, ...ref.slice(2).split("/")), ref).toBeDefined();
    }
  });

  it("documents every public service: each JSON route of each, and nothing else", () => {
    const services = publicServices(createRegistry(file_mail_v1_mail, file_mail_v1_webhooks, file_mail_v1_admin, file_mail_v1_events));
    const names = services.map((service) => service.typeName);
    expect(names).toEqual(expect.arrayContaining(["mail.v1.MailService", "mail.v1.WebhooksService"]));
    // Operator-only services are gRPC/Connect only.
    expect(names).not.toContain("mail.v1.AdminService");
    expect(names).not.toContain("mail.v1.EventsService");
    const served = publicServices(documentedRegistry()).flatMap((service) =>
      operationsOf(service).flatMap((op) => (op.http ? [`${op.http.verb} ${op.http.pathTemplate}`] : [])),
    );
    const actual = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`));
    expect(actual.sort()).toEqual([...served, `get ${OPENAPI_JSON_PATH}`].sort());
  });

  it("has the spec's routes, the webhook routes and the other administration routes, with their methods and scopes", () => {
    const actual = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(actual).toEqual(expect.arrayContaining(ALL_ROUTES.map((r) => `${r.method} ${r.path}`)));
    // The spec's table is every MailService route.
    const mail = operationsOf(MailService).flatMap((op) => (op.http ? [`${op.http.verb} ${op.http.pathTemplate}`] : []));
    expect([...mail, `get ${OPENAPI_JSON_PATH}`].sort()).toEqual(SPEC_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    for (const route of ALL_ROUTES) {
      const op = operation(doc, route.method, route.path);
      if (route.scope === undefined) {
        expect(op.security, route.path).toEqual([]);
        expect(op["x-required-scope"]).toBeUndefined();
      } else {
        expect(op["x-required-scope"], route.path).toBe(route.scope);
        expect(op.security).toEqual([{ bearerAuth: [] }]);
        expect(op.description).toContain(route.scope);
      }
    }
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("names operations after their RPCs and tags them by capability", () => {
    expect(operation(doc, "post", "/mail/v1/send").operationId).toBe("SendMessage");
    expect(operation(doc, "get", "/mail/v1/messages/{id}").operationId).toBe("GetMessage");
    expect(operation(doc, "post", "/mail/v1/conversions").operationId).toBe("RecordConversion");
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(operation(doc, "post", "/mail/v1/send").tags).toEqual(["Sending"]);
    expect(operation(doc, "get", "/mail/v1/me").tags).toEqual(["Account"]);
    expect(operation(doc, "get", "/mail/v1/forms").tags).toEqual(["Forms"]);
    expect(doc.tags.map((t) => t.name)).toEqual(
      expect.arrayContaining(["Sending", "Messages", "Account", "Contacts", "Forms", "Conversions"]),
    );
  });

  it("answers 202 for send and conversions, 200 elsewhere", () => {
    expect(Object.keys(operation(doc, "post", "/mail/v1/send").responses)).toContain("202");
    expect(Object.keys(operation(doc, "post", "/mail/v1/conversions").responses)).toContain("202");
    expect(Object.keys(operation(doc, "post", "/mail/v1/send").responses)).not.toContain("200");
    expect(Object.keys(operation(doc, "get", "/mail/v1/me").responses)).toContain("200");
    expect(Object.keys(operation(doc, "post", "/mail/v1/contacts").responses)).toContain("200");
  });

  it("uses the response_body field as the answer of GET by id", () => {
    const message = operation(doc, "get", "/mail/v1/messages/{id}");
    expect(at(message.responses, "200", "content", "application/json", "schema")).toEqual({
      $ref: "#/components/schemas/Message",
    });
    const contact = operation(doc, "get", "/mail/v1/contacts/{id}");
    expect(at(contact.responses, "200", "content", "application/json", "schema")).toEqual({
      $ref: "#/components/schemas/Contact",
    });
    expect(message.parameters).toContainEqual({ name: "id", in: "path", required: true, schema: { type: "string" } });
  });

  it("turns the other request fields of GET routes into query parameters", () => {
    const params = operation(doc, "get", "/mail/v1/messages").parameters ?? [];
    expect(params.map((p) => p.name)).toEqual(["limit", "cursor", "status", "q", "since", "tag", "recipient"]);
    for (const p of params) expect(p).toMatchObject({ in: "query", required: false });
    expect(params.find((p) => p.name === "limit")?.schema).toMatchObject({ type: "integer" });
    expect(params.find((p) => p.name === "since")?.schema).toEqual({ type: "string", format: "date-time" });
    // Enum query parameters take the lower-case names, never null.
    const status = params.find((p) => p.name === "status")?.schema;
    expect(at(status, "enum")).toContain("queued");
    expect(at(status, "nullable")).toBeUndefined();
    const contacts = operation(doc, "get", "/mail/v1/contacts").parameters ?? [];
    expect(contacts.map((p) => p.name)).toContain("listId");
  });

  it("writes the JSON conventions of the REST bridge", () => {
    // proto3 optional scalars: nullable and always present in answers.
    expect(at(schema("ListMessagesResponse"), "properties", "nextCursor")).toEqual({
      type: "string",
      nullable: true,
    });
    expect(at(schema("ListMessagesResponse"), "required")).toEqual(["items", "nextCursor"]);
    expect(at(schema("Message"), "properties", "templateId", "nullable")).toBe(true);
    expect(at(schema("Message"), "properties", "errorCode", "nullable")).toBe(true);
    expect(at(schema("Message"), "required")).toContain("errorCode");
    expect(at(schema("Message"), "properties", "createdAt")).toMatchObject({ type: "string", format: "date-time" });
    expect(at(schema("Message"), "properties", "events")).toEqual({
      type: "array",
      items: { $ref: "#/components/schemas/MessageEvent" },
    });
    expect(at(schema("Message"), "properties", "tags")).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
    });
    // Implicit-presence scalars are not nullable.
    expect(at(schema("Message"), "properties", "id")).toEqual({ type: "string" });

    // Enums: lower-case value names without prefix, no *_UNSPECIFIED.
    const status = at(schema("Message"), "properties", "status", "enum");
    expect(status).toEqual([
      "queued",
      "deferred",
      "processing",
      "sent",
      "delivered",
      "bounced",
      "complained",
      "rejected",
      "failed",
      "suppressed",
    ]);
    expect(status).not.toContain("dead_letter");
    expect(status).not.toContain("unspecified");
    expect(at(schema("RecordConversionRequest"), "properties", "eventType", "enum")).toEqual([
      "purchase",
      "order_confirmed",
      "registration",
      "lead",
      "booking",
    ]);
    // An optional enum admits null explicitly (nullable alone does not, with an enum).
    expect(at(schema("RecordConversionRequest"), "properties", "status")).toEqual({
      type: "string",
      enum: ["completed", "refunded", "cancelled", null],
      nullable: true,
    });

    // Message-typed fields: nullable through allOf, since $ref siblings are
    // ignored; `nullable` only counts next to a `type` (OpenAPI 3.0.3).
    expect(at(schema("GetAccountResponse"), "properties", "organization")).toEqual({
      type: "object",
      nullable: true,
      allOf: [{ $ref: "#/components/schemas/Organization" }],
    });
    expect(at(schema("GetAccountResponse"), "properties", "apiVersion")).toEqual({ type: "string" });
    expect(at(schema("Contact"), "properties", "attributes")).toEqual({
      type: "object",
      additionalProperties: true,
      nullable: true,
    });
  });

  it("requires in requests the fields the contract marks REQUIRED, and every field of answers", () => {
    // google.api.field_behavior = REQUIRED in the .proto files, nothing else.
    expect(at(schema("SendMessageRequest"), "required")).toEqual(["to"]);
    expect(at(schema("UpsertContactRequest"), "required")).toEqual(["email"]);
    expect(at(schema("RecordConversionRequest"), "required")).toEqual(["eventId", "eventType"]);
    // Consent is in requests and answers: two components.
    expect(at(schema("UpsertContactRequest"), "properties", "consent", "allOf", 0, "$ref")).toBe(
      "#/components/schemas/ConsentInput",
    );
    expect(at(schema("Contact"), "properties", "consent", "allOf", 0, "$ref")).toBe("#/components/schemas/Consent");
    expect(at(schema("ConsentInput"), "required")).toBeUndefined();
    expect(at(schema("Consent"), "required")).toEqual(["source", "at", "reference"]);
  });

  it("applies the openapi_schema option and the (buf.validate.field) rules", () => {
    const send = schema("SendMessageRequest");
    expect(at(send, "properties", "to", "oneOf", 0)).toEqual({ type: "string", format: "email" });
    expect(at(send, "properties", "to", "oneOf", 1, "properties", "name", "maxLength")).toBe(120);
    expect(at(send, "properties", "variables", "type")).toBe("object");
    // A variable may be null: `nullable` sits next to a `type`, as OpenAPI 3.0.3 wants.
    expect(at(send, "properties", "variables", "additionalProperties")).toEqual({
      oneOf: [{ type: "string", nullable: true }, { type: "number" }, { type: "boolean" }],
    });
    expect(at(send, "properties", "subject")).toEqual({ type: "string", maxLength: 500, nullable: true });
    expect(at(send, "properties", "html", "maxLength")).toBe(400000);
    expect(at(send, "properties", "text", "maxLength")).toBe(100000);
    expect(at(send, "properties", "idempotencyKey", "maxLength")).toBe(160);
    // A map's values, a list's size, a 32-bit integer's range.
    expect(at(send, "properties", "tags", "additionalProperties")).toEqual({ type: "string", maxLength: 120 });
    expect(at(schema("CreateFormRequest"), "properties", "fields", "maxItems")).toBe(30);
    const limit = (operation(doc, "get", "/mail/v1/messages").parameters ?? []).find((p) => at(p, "name") === "limit");
    expect(at(limit, "schema")).toEqual({ type: "integer", format: "int32", minimum: 1, maximum: 100 });
    const rotate = operation(doc, "post", "/mail/v1/api-keys/{id}/rotate");
    expect(at(rotate.requestBody, "content", "application/json", "schema", "properties", "graceHours")).toMatchObject({ minimum: 0, maximum: 8760 });
  });

  it("takes Idempotency-Key on every POST, and only there", () => {
    const ref = { $ref: "#/components/parameters/IdempotencyKey" };
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: "Idempotency-Key",
      in: "header",
      schema: { type: "string", maxLength: 200 },
    });
    for (const route of ALL_ROUTES) {
      const op = operation(doc, route.method, route.path);
      if (route.method === "post") {
        expect(op.parameters, route.path).toContainEqual(ref);
        expect(at(op.requestBody, "required")).toBe(true);
        const success = Object.entries(op.responses).find(([status]) => status.startsWith("2"));
        expect(at(success?.[1], "headers", "Idempotent-Replayed")).toEqual({
          $ref: "#/components/headers/Idempotent-Replayed",
        });
      } else {
        expect(op.parameters ?? [], route.path).not.toContainEqual(ref);
        // PATCH has a body (the changes), GET and DELETE none.
        if (route.method === "patch") expect(at(op.requestBody, "required")).toBe(true);
        else expect(op.requestBody).toBeUndefined();
      }
    }
  });

  it("documents errors with ErrorResponse and the codes each status can carry", () => {
    expect(at(schema("ErrorResponse"), "properties", "error", "properties", "code", "enum")).toEqual([
      ...ERROR_CODES.keys(),
    ]);
    for (const route of ALL_ROUTES) {
      const op = operation(doc, route.method, route.path);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        expect(at(response, "content", "application/json", "schema"), `${route.path} ${status}`).toEqual({
          $ref: "#/components/schemas/ErrorResponse",
        });
        const codes = at(response, "x-error-codes") as string[];
        expect(codes.length).toBeGreaterThan(0);
        for (const code of codes) {
          expect(ERROR_CODES.get(code as never)?.httpStatus).toBe(Number(status));
          expect(at(response, "description")).toContain(code);
        }
      }
      expect(Object.keys(op.responses)).toContain("500");
      if (route.scope !== undefined) {
        for (const status of ["401", "403", "429"]) expect(Object.keys(op.responses)).toContain(status);
        expect(at(op.responses, "429", "headers", "retry-after")).toEqual({
          $ref: "#/components/headers/retry-after",
        });
      }
    }
    const send = operation(doc, "post", "/mail/v1/send").responses;
    expect(at(send, "409", "x-error-codes")).toEqual(["SENDER_NOT_VERIFIED", "IDEMPOTENCY_CONFLICT"]);
    expect(at(send, "402", "x-error-codes")).toEqual(["INSUFFICIENT_CREDITS"]);
    expect(at(send, "413", "x-error-codes")).toEqual(["PAYLOAD_TOO_LARGE"]);
    expect(at(send, "401", "x-error-codes")).toEqual(["AUTHENTICATION_REQUIRED", "API_KEY_INVALID", "API_KEY_EXPIRED"]);
    const contacts = operation(doc, "post", "/mail/v1/contacts").responses;
    expect(at(contacts, "409", "x-error-codes")).toEqual(["IDEMPOTENCY_CONFLICT"]);
    expect(contacts["402"]).toBeUndefined();
    expect(operation(doc, "get", "/mail/v1/messages/{id}").responses["404"]).toBeDefined();
  });

  it("documents the response headers once and references them", () => {
    for (const name of [
      "X-Request-Id",
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
      "retry-after",
      "Idempotent-Replayed",
    ]) {
      expect(doc.components.headers[name], name).toBeDefined();
    }
    for (const route of ALL_ROUTES) {
      const op = operation(doc, route.method, route.path);
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = at(response, "headers");
        expect(at(headers, "X-Request-Id"), `${route.path} ${status}`).toEqual({
          $ref: "#/components/headers/X-Request-Id",
        });
        if (route.scope !== undefined) expect(at(headers, "x-ratelimit-remaining")).toBeDefined();
      }
    }
  });

  it("carries the per-operation rate limit of conversions", () => {
    const op = operation(doc, "post", "/mail/v1/conversions");
    expect(op["x-rate-limit-per-minute"]).toBe(300);
    expect(op.description).toContain("300");
    expect(operation(doc, "post", "/mail/v1/send")["x-rate-limit-per-minute"]).toBeUndefined();
  });

  it("serves the document itself without authentication", () => {
    const op = operation(doc, "get", OPENAPI_JSON_PATH);
    expect(op.security).toEqual([]);
    expect(at(op.responses, "200", "content", "application/json", "schema")).toMatchObject({ type: "object" });
    expect(Object.keys(op.responses)).not.toContain("401");
  });
});

describe("descriptions from proto comments", () => {
  it("are not available from the embedded descriptors (protoc-gen-es strips source info)", () => {
    expect(file_mail_v1_mail.proto.sourceCodeInfo).toBeUndefined();
    expect(at(schema("Message"), "properties", "id", "description")).toBeUndefined();
  });

  it("appear when the service comes from a descriptor set with source info", async () => {
    const dir = mkdtempSync(join(tmpdir(), "openapi-"));
    try {
      const out = join(dir, "image.binpb");
      // buf keeps source info unless told otherwise; the image is a FileDescriptorSet on the wire.
      execFileSync(join("node_modules", ".bin", "buf"), ["build", "-o", out], { stdio: "pipe" });
      const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(out)));
      const commented = generateOpenApi({ registry });
      await expectValid(commented);

      const message = commented.components.schemas.Message;
      expect(at(message, "description")).toBe("A message of the message log.");
      expect(at(message, "properties", "id", "description")).toBe("Message id (UUID).");
      expect(at(message, "properties", "templateId")).toEqual({
        type: "string",
        nullable: true,
        description: "Template used, if any.",
      });
      const send = operation(commented, "post", "/mail/v1/send");
      expect(send.summary).toBe("Queue one email.");
      expect(send.description).toContain("mail.transactional.send");
      expect(at(send.responses, "409", "description")).toContain("No verified sender");
      const list = operation(commented, "get", "/mail/v1/messages").parameters ?? [];
      expect(list.find((p) => p.name === "limit")?.description).toBe("Page size, 1 to 100, default 25.");
      // Apart from descriptions, the documents are the same.
      const strip = (value: unknown): unknown =>
        JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === "description" || key === "summary" ? undefined : v)));
      expect(strip(commented.paths)).toEqual(strip(doc.paths));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface LintProblem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: { pointer: string }[];
}

/** `redocly lint` with its recommended rules, on a document written to a temporary file. */
function redoclyLint(document: OpenAPIV3Document): LintProblem[] {
  const dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
  try {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(document, null, 2));
    const run = spawnSync(
      join("node_modules", ".bin", "redocly"),
      ["lint", "--extends=recommended", "--format=json", file],
      { encoding: "utf8", env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
    );
    if (run.stdout === "") throw new Error(`redocly lint printed nothing: ${run.stderr}`);
    return (JSON.parse(run.stdout) as { problems: LintProblem[] }).problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("strict OpenAPI: redocly lint, recommended rules", () => {
  it("finds no error in the document as served", () => {
    const served = generateOpenApi({ registry: documentedRegistry() });
    const errors = redoclyLint(served)
      .filter((p) => p.severity === "error")
      .map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? "?"}: ${p.message}`);
    expect(errors).toEqual([]);
  });
});
