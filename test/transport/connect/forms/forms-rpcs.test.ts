import { create, toJson } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateFormRequestSchema, DeactivateFormRequestSchema, SignupFormsService } from "../../../../src/gen/mail/v1/forms_pb.js";
import { FormFieldSchema, ListFormsRequestSchema, ListFormsResponseSchema, MailService } from "../../../../src/gen/mail/v1/mail_pb.js";
import { listFormsRpc, signupFormsServiceImpl } from "../../../../src/transport/connect/forms/index.ts";
import { kCaller } from "../../../../src/transport/connect/context.ts";
import type { Principal } from "../../../../src/capabilities/accounts/principal.ts";
import { apiErrorOf } from "../../../capabilities/contacts/harness.ts";
import { openFormsHarness, type FormsHarness } from "../../../capabilities/forms/harness.ts";

/** The form handlers map the contract's messages to the forms capability, for the caller's company. */
describe("form handlers (ListForms, the SignupFormsService)", () => {
  let h: FormsHarness;

  beforeAll(async () => {
    h = await openFormsHarness();
  });
  afterAll(async () => h?.close());

  function callerContext(companyId: string) {
    const values = createContextValues().set(kCaller, { companyId, scopes: ["mail.events.read"], actor: { kind: "key" } } as unknown as Principal);
    const method = MailService.method.listForms;
    return createHandlerContext({ service: MailService, method, protocolName: "connect", requestMethod: "GET", url: "http://x/mail/v1/forms", contextValues: values });
  }
  /** An operator acting for `companyId` (what the auth step resolves from the operator token and x-mail-company-id). */
  const operatorContext = (companyId: string) =>
    createHandlerContext({
      service: SignupFormsService,
      method: SignupFormsService.method.createForm,
      protocolName: "grpc",
      requestMethod: "POST",
      url: "http://x/",
      contextValues: createContextValues().set(kCaller, { companyId, scopes: ["mail.admin"], actor: { kind: "operator" } } as unknown as Principal),
    });

  it("an operator creates and deactivates a form; GET /mail/v1/forms shows the caller's active ones as JSON", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany();
    const admin = signupFormsServiceImpl(h.forms);
    const created = await admin.createForm(
      create(CreateFormRequestSchema, {
        name: "Newsletter",
        fields: [
          create(FormFieldSchema, { name: "email", label: "E-Mail", type: "email", required: true }),
          create(FormFieldSchema, { name: "topic", label: "Thema", type: "select", options: ["News"] }),
        ],
        consentText: "Ja, ich will.",
        doubleOptIn: true,
        language: "de",
      }),
      operatorContext(companyId),
    );
    const publicId = created.form?.publicId ?? "";
    await admin.createForm(
      create(CreateFormRequestSchema, {
        name: "Theirs",
        fields: [create(FormFieldSchema, { name: "email", label: "Email", type: "email", required: true })],
        consentText: "Yes",
        language: "en",
      }),
      operatorContext(other),
    );

    const listed = await listFormsRpc(h.forms).listForms(create(ListFormsRequestSchema), callerContext(companyId));
    expect(toJson(ListFormsResponseSchema, create(ListFormsResponseSchema, listed))).toEqual({
      items: [
        {
          publicId,
          name: "Newsletter",
          fields: [
            { name: "email", label: "E-Mail", type: "email", required: true },
            { name: "topic", label: "Thema", type: "select", options: ["News"] },
          ],
          consentText: "Ja, ich will.",
          doubleOptIn: true,
          language: "de",
          url: `https://mail.example.test/mail/v1/forms/${publicId}`,
        },
      ],
    });

    const off = await admin.deactivateForm(create(DeactivateFormRequestSchema, { publicId }), operatorContext(companyId));
    expect(off.form?.publicId).toBe(publicId);
    expect((await listFormsRpc(h.forms).listForms(create(ListFormsRequestSchema), callerContext(companyId))).items).toEqual([]);
    await apiErrorOf(
      Promise.resolve(admin.deactivateForm(create(DeactivateFormRequestSchema, { publicId }), operatorContext(other))),
      "NOT_FOUND",
    );
  });
});
