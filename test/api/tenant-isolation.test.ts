import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { ReportsService } from "../../src/gen/mail/v1/reports_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

describe("tenant isolation through the API", () => {
  let h: ApiHarness;
  let a: { companyId: string; keyId: string; secret: string };
  let b: { companyId: string; keyId: string; secret: string };

  beforeAll(async () => {
    h = await startApiHarness();
    a = await h.newCompanyWithKey(["mail.events.read"], "Company A");
    b = await h.newCompanyWithKey(["mail.events.read"], "Company B");
  });
  afterAll(async () => h?.close());

  it("each key sees its own company only", async () => {
    const meA = (await (await h.fetch("/mail/v1/me", bearer(a.secret))).json()) as { organization: { id: string; name: string } };
    const meB = (await (await h.fetch("/mail/v1/me", bearer(b.secret))).json()) as { organization: { id: string; name: string } };
    expect(meA.organization).toEqual({ id: a.companyId, name: "Company A" });
    expect(meB.organization).toEqual({ id: b.companyId, name: "Company B" });
  });

  it("one company's id never reaches another company's keys", async () => {
    const listA = await h.forCompany(ApiKeysService, a.companyId).listApiKeys({});
    expect(listA.items.map((k) => k.id)).toEqual([a.keyId]);
    for (const call of [
      () => h.forCompany(ApiKeysService, a.companyId).revokeApiKey({ id: b.keyId }),
      () => h.forCompany(ApiKeysService, a.companyId).rotateApiKey({ id: b.keyId }),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.NotFound);
    }
    // B's key still works: nothing was revoked or rotated.
    expect((await h.fetch("/mail/v1/me", bearer(b.secret))).status).toBe(200);
  });

  it("the administration routes of lists, forms and reports never reach another company's records (REST and gRPC: 404)", async () => {
    const owner = await h.newCompanyWithKey(["mail.admin", "mail.events.read", "mail.conversions.write"], "Owner");
    const intruder = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Intruder");
    const { list } = await h.forCompany(ListsService, owner.companyId).createContactList({ name: "Owner's list" });
    const { form } = await h.forCompany(SignupFormsService, owner.companyId).createForm({
      name: "Owner's form",
      fields: [{ name: "email", label: "Email", type: "email", required: true }],
      consentText: "Yes",
      language: "en",
    });
    const listId = list?.id ?? "";
    const publicId = form?.publicId ?? "";
    const json = (method: string, body: unknown) => ({
      method,
      headers: { authorization: `Bearer ${intruder.secret}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    for (const [path, init] of [
      [`/mail/v1/lists/${listId}`, json("PATCH", { name: "Taken over" })],
      [`/mail/v1/lists/${listId}`, { method: "DELETE", headers: { authorization: `Bearer ${intruder.secret}` } }],
      [`/mail/v1/forms/${publicId}/deactivate`, json("POST", {})],
    ] as const) {
      const response = await h.fetch(path, init);
      expect(response.status, `${init.method} ${path}`).toBe(404);
    }
    const transport = createGrpcTransport({ baseUrl: h.app.grpcUrl });
    const options = { headers: { authorization: `Bearer ${intruder.secret}` } };
    for (const call of [
      () => createClient(ListsService, transport).renameContactList({ id: listId, name: "Taken over" }, options),
      () => createClient(ListsService, transport).deleteContactList({ id: listId }, options),
      () => createClient(SignupFormsService, transport).deactivateForm({ publicId }, options),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect((error as ConnectError).code).toBe(Code.NotFound);
    }
    // What the intruder lists is its own (nothing); the owner's list and form are untouched.
    expect(await (await h.fetch("/mail/v1/lists", bearer(intruder.secret))).json()).toEqual({ items: [] });
    expect(await (await h.fetch("/mail/v1/forms", bearer(intruder.secret))).json()).toEqual({ items: [] });
    expect((await createClient(ReportsService, transport).getRevenueByCampaign({}, options)).items).toEqual([]);
    expect((await h.forCompany(ListsService, owner.companyId).listContactLists({})).items.map((l) => l.name)).toEqual(["Owner's list"]);
    expect((await h.forCompany(MailService, owner.companyId).listForms({})).items.map((f) => f.publicId)).toEqual([publicId]);
  });
});
