import { create, createFileRegistry, type DescMessage, setExtension } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorFrom } from "../../../src/contract/api-error.ts";
import { field_behavior, FieldBehavior } from "../../../src/gen/google/api/field_behavior_pb.js";
import { MailService } from "../../../src/gen/mail/v1/mail_pb.js";
import { missingRequiredFields } from "../../../src/transport/connect/required-fields.ts";
import { type ApiHarness, bearer, startApiHarness } from "../../support/api-harness.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

/** How often `field:` starts a problem in a VALIDATION_ERROR message (`a: x; b: y`). */
function timesNamed(message: string, field: string): number {
  return message.split("; ").filter((problem) => problem.startsWith(`${field}: `)).length;
}

describe("required fields (google.api.field_behavior = REQUIRED), on every door", () => {
  let h: ApiHarness;
  let secret: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret } = await h.newCompanyWithKey());
  });
  afterAll(async () => h?.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${secret}` }) =>
    h.fetch(path, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });

  async function validationMessage(response: Response): Promise<string> {
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.code).toBe("VALIDATION_ERROR");
    return error.message;
  }

  async function connectFailure(call: Promise<unknown>): Promise<ConnectError> {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectError);
    return error as ConnectError;
  }

  it("a send without `to` answers 400 naming `to` once, as the send validation words it", async () => {
    for (const body of [{ subject: "Hi", html: "<p>Hi</p>" }, { to: null, subject: "Hi", html: "<p>Hi</p>" }]) {
      const message = await validationMessage(await post("/mail/v1/send", body));
      expect(message).toBe("to: is required");
      expect(timesNamed(message, "to")).toBe(1);
    }
  });

  it("names every missing required field in one answer", async () => {
    const message = await validationMessage(await post("/mail/v1/conversions", { revenue: 10 }));
    expect(message.split("; ").sort()).toEqual(["eventId: is required", "eventType: is required"]);
  });

  it("answers 400 naming the missing field before the operation looks at the request; a complete request gets past it", async () => {
    expect(await validationMessage(await post("/mail/v1/contacts", { firstName: "Ada" }))).toBe("email: is required");
    const complete = await post("/mail/v1/contacts", { email: "ada@example.com" });
    expect(complete.status).not.toBe(400);
  });

  it("checks the key first: no key is 401 even when required fields are missing", async () => {
    const response = await post("/mail/v1/send", {}, {});
    expect(response.status).toBe(401);
  });

  it("applies to Connect and gRPC callers, with INVALID_ARGUMENT and the contract's code", async () => {
    for (const transport of [
      createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: h.app.grpcUrl }),
    ]) {
      const client = createClient(MailService, transport);
      const error = await connectFailure(client.getMessage({ id: "" }, { headers: { authorization: `Bearer ${secret}` } }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(apiErrorFrom(error)?.code).toBe("VALIDATION_ERROR");
      expect(error.rawMessage).toBe("id: is required");
    }
    // The same message with an id gets past the check (and finds nothing).
    const response = await h.fetch("/mail/v1/messages/00000000-0000-4000-8000-000000000000", bearer(secret));
    expect(response.status).toBe(404);
  });

  it("applies to the AdminService", async () => {
    const created = await connectFailure(h.admin.createCompany({ name: "" }));
    expect(apiErrorFrom(created)?.code).toBe("VALIDATION_ERROR");
    expect(created.rawMessage).toBe("name: is required");

    const report = await connectFailure(h.admin.reportProviderEvent({ detail: "x" }));
    expect(report.rawMessage.split("; ").sort()).toEqual([
      "providerEventId: is required",
      "providerMessageId: is required",
      "type: is required",
    ]);
  });
});

describe("missingRequiredFields", () => {
  // A contract of its own, to show nested messages, lists and maps are walked.
  const required = create(FieldOptionsSchema);
  setExtension(required, field_behavior, [FieldBehavior.REQUIRED]);
  const { OPTIONAL: LABEL_OPTIONAL, REPEATED: LABEL_REPEATED } = FieldDescriptorProto_Label;
  const { STRING: TYPE_STRING, MESSAGE: TYPE_MESSAGE } = FieldDescriptorProto_Type;
  const registry = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: "t/v1/t.proto",
      package: "t.v1",
      syntax: "proto3",
      messageType: [
        {
          name: "Line",
          field: [{ name: "sku", jsonName: "sku", number: 1, label: LABEL_OPTIONAL, type: TYPE_STRING, options: required }],
        },
        {
          name: "Order",
          field: [
            { name: "order_id", jsonName: "orderId", number: 1, label: LABEL_OPTIONAL, type: TYPE_STRING, options: required },
            { name: "lines", jsonName: "lines", number: 2, label: LABEL_REPEATED, type: TYPE_MESSAGE, typeName: ".t.v1.Line", options: required },
            { name: "first", jsonName: "first", number: 3, label: LABEL_OPTIONAL, type: TYPE_MESSAGE, typeName: ".t.v1.Line" },
            { name: "note", jsonName: "note", number: 4, label: LABEL_OPTIONAL, type: TYPE_STRING },
          ],
        },
      ],
    }),
    () => undefined,
  );
  const order = registry.getMessage("t.v1.Order") as DescMessage;

  it("names missing fields by their JSON path, nested ones included", () => {
    const problems = missingRequiredFields(order, create(order, { first: {}, lines: [{ sku: "a" }, {}] }));
    expect(problems).toEqual([
      { field: "orderId", problem: "is required" },
      { field: "lines[1].sku", problem: "is required" },
      { field: "first.sku", problem: "is required" },
    ]);
  });

  it("counts an empty list as missing and leaves optional fields alone", () => {
    expect(missingRequiredFields(order, create(order, { orderId: "o-1" }))).toEqual([
      { field: "lines", problem: "is required" },
    ]);
    expect(missingRequiredFields(order, create(order, { orderId: "o-1", lines: [{ sku: "a" }] }))).toEqual([]);
  });
});
