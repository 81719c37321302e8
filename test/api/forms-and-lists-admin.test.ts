import { randomUUID } from "node:crypto";
import type { DescService } from "@bufbuild/protobuf";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { requestOn } from "./doors.ts";

/**
 * Sign-up forms for the company's Mail administrators (SignupFormsService:
 * POST /mail/v1/forms, POST /mail/v1/forms/{publicId}/deactivate, gRPC),
 * and contact lists and forms for operators (the same company services on
 * the operator listener, the company in x-mail-company-id): each over JSON (HTTP/1.1 and h2c) or Connect and over gRPC,
 * and never across companies.
 */
interface FormJson {
  publicId: string;
  name: string;
  fields: Array<{ name: string; label: string; type: string; required: boolean; options: string[] }>;
  consentText: string;
  doubleOptIn: boolean;
  language: string;
  url: string;
}

const EMAIL_FIELD = { name: "email", label: "Email", type: "email", required: true };

function withToken(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

function withCompany(companyId: string): Interceptor {
  return (next) => (req) => {
    req.header.set("x-mail-company-id", companyId);
    return next(req);
  };
}

function codeOf(error: unknown): Code | undefined {
  return error instanceof ConnectError ? error.code : undefined;
}

describe("sign-up forms and contact lists for administrators and operators", () => {
  let h: ApiHarness;
  /** A company service over gRPC on the operator listener, acting for `companyId` (operator token + x-mail-company-id). */
  const grpcFor = <S extends DescService>(service: S, companyId: string): Client<S> =>
    createClient(service, createGrpcTransport({ baseUrl: h.app.operatorUrl, interceptors: [withToken(OPERATOR_TOKEN), withCompany(companyId)] }));

  beforeAll(async () => {
    h = await startApiHarness();
  });
  afterAll(async () => h?.close());

  function post(path: string, body: unknown, secret: string): Promise<Response> {
    return h.fetch(path, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  }

  async function activeForms(secret: string): Promise<string[]> {
    const response = await h.fetch("/mail/v1/forms", bearer(secret));
    expect(response.status).toBe(200);
    return ((await response.json()) as { items: FormJson[] }).items.map((f) => f.publicId);
  }

  it("a company administrator creates a form (201) over JSON; it is listed, served, and deactivated (200)", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Forms Co");
    const design = {
      name: "Newsletter",
      fields: [EMAIL_FIELD, { name: "topic", label: "Topic", type: "select", required: false, options: ["News", "Offers"] }],
      consentText: "Yes, send me the newsletter.",
      doubleOptIn: true,
      language: "en-gb",
    };
    const created = await post("/mail/v1/forms", design, secret);
    expect(created.status).toBe(201);
    const { form } = (await created.json()) as { form: FormJson };
    expect(form).toEqual({
      ...design,
      fields: [{ ...EMAIL_FIELD, options: [] }, design.fields[1]],
      language: "en-GB",
      publicId: expect.any(String),
      url: expect.stringMatching(new RegExp(`/mail/v1/forms/${form.publicId}$`)),
    });
    expect(await activeForms(secret)).toEqual([form.publicId]);
    // The hosted page shares the /mail/v1/forms/{publicId} prefix with the deactivation route: both are served.
    const page = await h.fetch(new URL(form.url).pathname);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Yes, send me the newsletter.");
    // A sign-up posted to the page reaches the page's handler (refused without its token), not the JSON routes' 404.
    const signup = await h.fetch(new URL(form.url).pathname, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "email=visitor%40example.com",
    });
    expect(signup.status).not.toBe(404);
    expect(signup.headers.get("content-type")).toContain("text/html");

    const off = await post(`/mail/v1/forms/${form.publicId}/deactivate`, {}, secret);
    expect(off.status).toBe(200);
    expect(((await off.json()) as { form: FormJson }).form.publicId).toBe(form.publicId);
    expect(await activeForms(secret)).toEqual([]);
    // Idempotent.
    expect((await post(`/mail/v1/forms/${form.publicId}/deactivate`, {}, secret)).status).toBe(200);
  });

  it("names every bad field of a design in one 400, and needs mail.admin", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.admin"], "Bad Design");
    const bad = await post("/mail/v1/forms", { name: "x", fields: [{ name: "first", label: "First", type: "colour" }], consentText: "ok", language: "not a tag!" }, secret);
    expect(bad.status).toBe(400);
    const { error } = (await bad.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toContain("language:");
    expect(error.message).toContain("fields[0].type:");
    expect(error.message).toContain("email");
    const missing = await post("/mail/v1/forms", { fields: [EMAIL_FIELD] }, secret);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/name: is required.*consentText: is required.*language: is required/);

    const reader = await h.newCompanyWithKey(["mail.events.read"], "Reader");
    const refused = await post("/mail/v1/forms", { name: "x", fields: [EMAIL_FIELD], consentText: "ok", language: "en" }, reader.secret);
    expect(refused.status).toBe(403);
    expect((await post(`/mail/v1/forms/${randomUUID()}/deactivate`, {}, reader.secret)).status).toBe(403);
  });

  it("serves the same routes as JSON on the h2c listener and as gRPC", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Doors Co");
    const body = JSON.stringify({ name: "Over h2c", fields: [EMAIL_FIELD], consentText: "Yes", language: "de" });
    const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
    const h2c = await requestOn("h2c", h.app, { method: "POST", path: "/mail/v1/forms", headers, body });
    expect(h2c.status).toBe(201);
    const viaH2c = (JSON.parse(h2c.body) as { form: FormJson }).form;
    expect(viaH2c).toMatchObject({ name: "Over h2c", language: "de" });

    const forms = createClient(SignupFormsService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [withToken(secret)] }));
    const viaGrpc = await forms.createForm({ name: "Over gRPC", fields: [EMAIL_FIELD], consentText: "Ja", language: "de", doubleOptIn: false });
    expect(viaGrpc.form).toMatchObject({ name: "Over gRPC", doubleOptIn: false, publicId: expect.any(String) });
    expect(new Set(await activeForms(secret))).toEqual(new Set([viaH2c.publicId, viaGrpc.form?.publicId]));

    const off = await forms.deactivateForm({ publicId: viaH2c.publicId });
    expect(off.form?.publicId).toBe(viaH2c.publicId);
    const offH2c = await requestOn("h2c", h.app, { method: "POST", path: `/mail/v1/forms/${viaGrpc.form?.publicId}/deactivate`, headers, body: "{}" });
    expect(offH2c.status).toBe(200);
    expect(await activeForms(secret)).toEqual([]);

    const invalid = await forms.createForm({ name: "No email", fields: [], consentText: "x", language: "en" }).catch((e: unknown) => e);
    expect(codeOf(invalid)).toBe(Code.InvalidArgument);
  });

  it("another company's form cannot be deactivated (404, REST and gRPC) and stays active", async () => {
    const owner = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Owner");
    const intruder = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Intruder");
    const { form } = (await (await post("/mail/v1/forms", { name: "Mine", fields: [EMAIL_FIELD], consentText: "Yes", language: "en" }, owner.secret)).json()) as {
      form: FormJson;
    };
    const rest = await post(`/mail/v1/forms/${form.publicId}/deactivate`, {}, intruder.secret);
    expect(rest.status).toBe(404);
    expect(((await rest.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    const forms = createClient(SignupFormsService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [withToken(intruder.secret)] }));
    expect(codeOf(await forms.deactivateForm({ publicId: form.publicId }).catch((e: unknown) => e))).toBe(Code.NotFound);
    expect(codeOf(await grpcFor(SignupFormsService, intruder.companyId).deactivateForm({ publicId: form.publicId }).catch((e: unknown) => e))).toBe(Code.NotFound);
    expect((await post("/mail/v1/forms/not-a-form/deactivate", {}, intruder.secret)).status).toBe(404);
    expect(await activeForms(owner.secret)).toEqual([form.publicId]);
    expect(await activeForms(intruder.secret)).toEqual([]);
  });

  it("operators create, list and deactivate a company's forms; an unknown company is 404", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.events.read"], "Operated Forms");
    const created = await grpcFor(SignupFormsService, companyId).createForm({ name: "By operator", fields: [EMAIL_FIELD], consentText: "Yes", language: "en" });
    const listed = await h.forCompany(MailService, companyId).listForms({});
    expect(listed.items.map((f) => f.publicId)).toEqual([created.form?.publicId]);
    expect(await activeForms(secret)).toEqual([created.form?.publicId]);
    await grpcFor(SignupFormsService, companyId).deactivateForm({ publicId: created.form?.publicId ?? "" });
    expect((await grpcFor(MailService, companyId).listForms({})).items).toEqual([]);

    const unknown = randomUUID();
    for (const call of [
      () => h.forCompany(MailService, unknown).listForms({}),
      () => grpcFor(SignupFormsService, unknown).createForm({ name: "x", fields: [EMAIL_FIELD], consentText: "x", language: "en" }),
    ]) {
      expect(codeOf(await call().catch((e: unknown) => e))).toBe(Code.NotFound);
    }
  });

  it("operators create, list, rename and delete a company's contact lists (Connect and gRPC); the company's key sees them", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.admin", "mail.contacts.write", "mail.contacts.read"], "Operated Lists");
    const created = await h.forCompany(ListsService, companyId).createContactList({ name: "Weekly" });
    const listId = created.list?.id ?? "";
    expect(created.list).toMatchObject({ name: "Weekly", id: expect.any(String) });
    const second = await grpcFor(ListsService, companyId).createContactList({ name: "VIP" });
    expect(codeOf(await grpcFor(ListsService, companyId).createContactList({ name: "weekly" }).catch((e: unknown) => e))).toBe(Code.InvalidArgument);

    const viaKey = (await (await h.fetch("/mail/v1/lists", bearer(secret))).json()) as { items: Array<{ id: string; name: string }> };
    expect(viaKey.items.map((l) => l.name)).toEqual(["Weekly", "VIP"]);
    expect((await grpcFor(ListsService, companyId).listContactLists({})).items.map((l) => l.id)).toEqual([listId, second.list?.id]);

    const renamed = await grpcFor(ListsService, companyId).renameContactList({ id: listId, name: "Monthly" });
    expect(renamed.list?.name).toBe("Monthly");
    // A contact joins through its write; deleting the list keeps the contact.
    const member = await post("/mail/v1/contacts", { email: "member@example.com", listIds: [listId] }, secret);
    expect(((await member.json()) as { listIds: string[] }).listIds).toEqual([listId]);
    expect(await h.forCompany(ListsService, companyId).deleteContactList({ id: listId })).toMatchObject({ id: listId });
    expect((await h.forCompany(ListsService, companyId).listContactLists({})).items.map((l) => l.name)).toEqual(["VIP"]);
    const contact = (await (await h.fetch("/mail/v1/contacts/member@example.com", bearer(secret))).json()) as { listIds: string[] };
    expect(contact.listIds).toEqual([]);
  });

  it("an operator naming one company never reaches another company's lists (404), nor an unknown company's", async () => {
    const a = await h.newCompanyWithKey(["mail.admin"], "List A");
    const b = await h.newCompanyWithKey(["mail.admin"], "List B");
    const theirs = await h.forCompany(ListsService, b.companyId).createContactList({ name: "B's list" });
    const id = theirs.list?.id ?? "";
    for (const call of [
      () => grpcFor(ListsService, a.companyId).renameContactList({ id, name: "Stolen" }),
      () => grpcFor(ListsService, a.companyId).deleteContactList({ id }),
      () => h.forCompany(ListsService, a.companyId).renameContactList({ id, name: "Stolen" }),
      () => h.forCompany(ListsService, a.companyId).deleteContactList({ id }),
      () => grpcFor(ListsService, a.companyId).deleteContactList({ id: "not-a-list" }),
      () => grpcFor(ListsService, randomUUID()).listContactLists({}),
      () => grpcFor(ListsService, randomUUID()).createContactList({ name: "Orphan" }),
    ]) {
      expect(codeOf(await call().catch((e: unknown) => e))).toBe(Code.NotFound);
    }
    expect((await grpcFor(ListsService, a.companyId).listContactLists({})).items).toEqual([]);
    expect((await grpcFor(ListsService, b.companyId).listContactLists({})).items.map((l) => l.name)).toEqual(["B's list"]);
    // The company's own key: another company's list id is 404 on the JSON routes too.
    const patch = await h.fetch(`/mail/v1/lists/${id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${a.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Stolen" }),
    });
    expect(patch.status).toBe(404);
    const missingName = await grpcFor(ListsService, a.companyId).createContactList({ name: "" }).catch((e: unknown) => e);
    expect(codeOf(missingName)).toBe(Code.InvalidArgument);
  });
});
