import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_DOMAIN } from "../../src/contract/api-error.ts";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { ALL_SCOPES, type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/**
 * PostgreSQL stores neither the NUL character nor unpaired surrogates
 * (JSON's "\uD800" escapes can write them). Every string of every request,
 * however deep, is refused with a 400 VALIDATION_ERROR naming where it is,
 * never a 500 from a statement that failed, and nothing is stored.
 */
let h: ApiHarness;
let secret: string;

beforeAll(async () => {
  h = await startApiHarness();
  ({ secret } = await h.newCompanyWithKey(ALL_SCOPES, "Text Values"));
});
afterAll(async () => h?.close());

async function post(path: string, body: unknown): Promise<{ status: number; error: { code: string; message: string } }> {
  const response = await h.fetch(path, { method: "POST", ...bearer(secret, { "content-type": "application/json" }), body: JSON.stringify(body) });
  return { status: response.status, ...((await response.json()) as { error: { code: string; message: string } }) };
}

describe("text PostgreSQL cannot store, at any depth", () => {
  it("a NUL in a form's field label or select option (REST) is a 400 naming that field, and no form is made", async () => {
    const answer = await post("/mail/v1/forms", {
      name: "Text form",
      consentText: "Yes\u0000",
      language: "en",
      fields: [
        { name: "email", label: "E\u0000mail", type: "email", required: true },
        { name: "topic", label: "Topic", type: "select", options: ["A", "B\u0000"] },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.error.code).toBe("VALIDATION_ERROR");
    expect(answer.error.message).toContain("consentText: must not contain the NUL character");
    expect(answer.error.message).toContain("fields[0].label: must not contain the NUL character");
    expect(answer.error.message).toContain("fields[1].options[1]: must not contain the NUL character");
    const forms = (await (await h.fetch("/mail/v1/forms", bearer(secret))).json()) as { items: unknown[] };
    expect(forms.items).toEqual([]);
  });

  it("a contact's attribute keys and nested values (REST) are named by their path", async () => {
    const answer = await post("/mail/v1/contacts", { email: "text@example.com", attributes: { "pl\u0000an": "pro", nested: { deep: ["ok", "x\u0000"] } } });
    expect(answer.status).toBe(400);
    expect(answer.error.message).toContain("attributes.pl\u0000an: must not contain");
    expect(answer.error.message).toContain("attributes.nested.deep[1]: must not contain");
    expect((await h.fetch("/mail/v1/contacts/text@example.com", bearer(secret))).status).toBe(404);
  });

  it("over gRPC: INVALID_ARGUMENT with ErrorInfo VALIDATION_ERROR naming the field", async () => {
    const auth: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${secret}`);
      return next(req);
    };
    const client = createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [auth] }));
    // google.protobuf.Struct fields are JSON objects in protobuf-es.
    const error = await client.upsertContact({ email: "grpc-text@example.com", attributes: { note: "a\u0000b" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    const connectError = error as ConnectError;
    expect(connectError.code).toBe(Code.InvalidArgument);
    expect(connectError.rawMessage).toContain("attributes.note: must not contain the NUL character");
    expect(connectError.findDetails(ErrorInfoSchema)[0]).toMatchObject({ reason: "VALIDATION_ERROR", domain: ERROR_DOMAIN });
  });

  it("text that is merely unusual (emoji, right-to-left, other control characters) is not this rule's business", async () => {
    const answer = await h.fetch("/mail/v1/contacts", {
      method: "POST",
      ...bearer(secret, { "content-type": "application/json" }),
      body: JSON.stringify({ email: "unusual@example.com", firstName: "😀 שלום", attributes: { note: "tab\there" } }),
    });
    expect(answer.status, await answer.clone().text()).toBeLessThan(300);
  });
});
