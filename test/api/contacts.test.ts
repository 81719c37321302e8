import { create } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContactStatus, MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { ALL_SCOPES, type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/**
 * Contacts and lists over the real service: the REST bridge's JSON, the
 * scopes of the contract, gRPC, and what a caller sees of another company.
 */
interface ContactJson {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  phone: string | null;
  locale: string | null;
  attributes: Record<string, unknown>;
  tags: string[];
  listIds: string[];
  status: string;
  consent: { source: string; at: string; reference: string | null } | null;
  createdAt: string;
  updatedAt: string;
}

interface UpsertJson extends ContactJson {
  created: boolean;
  marketable: boolean;
}

interface ErrorJson {
  error: { code: string; message: string };
}

describe("contacts and lists through the API", () => {
  let h: ApiHarness;
  let key: string;
  let companyId: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret: key, companyId } = await h.newCompanyWithKey([...ALL_SCOPES, "mail.admin"]));
  });
  afterAll(async () => h?.close());

  function post(path: string, body: unknown, secret = key): Promise<Response> {
    return h.fetch(path, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  }

  async function upsert(body: unknown, secret = key): Promise<UpsertJson> {
    const response = await post("/mail/v1/contacts", body, secret);
    expect(response.status).toBe(200);
    return (await response.json()) as UpsertJson;
  }

  async function get(path: string, secret = key): Promise<{ status: number; body: unknown }> {
    const response = await h.fetch(path, bearer(secret));
    return { status: response.status, body: await response.json() };
  }

  it("POST creates (200, created: true) then updates by address (created: false), in the public JSON form", async () => {
    const first = await upsert({ email: "Ada@Example.com", firstName: "Ada", tags: ["vip"], attributes: { plan: "pro", seats: 3 } });
    expect(first).toEqual({
      id: expect.any(String),
      email: "Ada@example.com",
      firstName: "Ada",
      lastName: null,
      company: null,
      phone: null,
      locale: null,
      attributes: { plan: "pro", seats: 3 },
      tags: ["vip"],
      listIds: [],
      status: "pending",
      consent: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.any(String),
      created: true,
      marketable: false,
    });
    const second = await upsert({ email: "ada@example.com", consent: { source: "checkout", at: "2026-01-31T12:00:00Z", reference: "order-9" } });
    expect(second).toMatchObject({
      id: first.id,
      created: false,
      marketable: true,
      status: "subscribed",
      firstName: "Ada",
      tags: ["vip"],
      consent: { source: "checkout", at: "2026-01-31T12:00:00.000Z", reference: "order-9" },
    });
  });

  it("names every bad field in one 400 VALIDATION_ERROR", async () => {
    const response = await post("/mail/v1/contacts", {
      email: "x@example.com",
      phone: "12",
      locale: "!!",
      status: "bounced",
      listIds: Array.from({ length: 21 }, () => crypto.randomUUID()),
      attributes: { deep: { a: 1 } },
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorJson;
    expect(error.code).toBe("VALIDATION_ERROR");
    for (const field of ["phone", "locale", "attributes.deep", "listIds", "status"]) expect(error.message).toContain(`${field}:`);

    const noConsent = await post("/mail/v1/contacts", { email: "x@example.com", status: "subscribed" });
    expect(noConsent.status).toBe(400);
    expect(((await noConsent.json()) as ErrorJson).error.message).toMatch(/^consent: /);

    const missing = await post("/mail/v1/contacts", { firstName: "No address" });
    expect(((await missing.json()) as ErrorJson).error).toEqual({ code: "VALIDATION_ERROR", message: "email: is required" });
  });

  it("GET /mail/v1/contacts/{id} finds a contact by id or by address, `+` and `@` encoded or not", async () => {
    const { id } = await upsert({ email: "Grace+News@Example.com", lastName: "Hopper" });
    const paths = [
      `/mail/v1/contacts/${id}`,
      `/mail/v1/contacts/${encodeURIComponent("grace+news@example.com")}`,
      "/mail/v1/contacts/GRACE%2BNEWS%40EXAMPLE.COM",
      "/mail/v1/contacts/grace+news@example.com",
    ];
    for (const path of paths) {
      const { status, body } = await get(path);
      expect(status, path).toBe(200);
      expect(body, path).toMatchObject({ id, email: "Grace+News@example.com", lastName: "Hopper" });
    }
    // `+` is the address's own character, never a space.
    expect((await get("/mail/v1/contacts/grace%20news@example.com")).status).toBe(404);
    expect((await get("/mail/v1/contacts/nobody@example.com")).body).toEqual({ error: { code: "NOT_FOUND", message: expect.any(String) } });
  });

  it("GET /mail/v1/contacts pages newest first with opaque cursors, filtered by status, q, tag and listId", async () => {
    const { companyId: own, secret } = await h.newCompanyWithKey([...ALL_SCOPES, "mail.admin"], "Pages Ltd");
    const created = await post("/mail/v1/lists", { name: "Buyers" }, secret);
    expect(created.status).toBe(201);
    const { list } = (await created.json()) as { list: { id: string; name: string } };
    for (let i = 0; i < 5; i++) {
      await upsert({ email: `p${i}@example.com`, tags: i % 2 ? ["odd"] : [], listIds: i < 2 ? [list.id] : [] }, secret);
    }
    const emails: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = (await get(`/mail/v1/contacts?${query}`, secret)).body as { items: ContactJson[]; nextCursor: string | null };
      emails.push(...page.items.map((c) => c.email));
      cursor = page.nextCursor;
    } while (cursor);
    expect(emails).toEqual(["p4@example.com", "p3@example.com", "p2@example.com", "p1@example.com", "p0@example.com"]);

    const filtered = async (query: string) =>
      ((await get(`/mail/v1/contacts?${query}`, secret)).body as { items: ContactJson[] }).items.map((c) => c.email);
    expect(await filtered("tag=odd")).toEqual(["p3@example.com", "p1@example.com"]);
    expect(await filtered(`listId=${list.id}`)).toEqual(["p1@example.com", "p0@example.com"]);
    expect(await filtered("q=P2%40")).toEqual(["p2@example.com"]);
    expect(await filtered("status=pending&limit=1")).toEqual(["p4@example.com"]);
    expect(await filtered("status=subscribed")).toEqual([]);

    expect((await get("/mail/v1/contacts?limit=101", secret)).status).toBe(400);
    expect((await get("/mail/v1/contacts?status=gone", secret)).status).toBe(400);
    expect((await get("/mail/v1/contacts?cursor=forged", secret)).status).toBe(400);
    expect((await get(`/mail/v1/contacts?listId=${crypto.randomUUID()}`, secret)).status).toBe(404);
    // Nothing of the other company shows.
    expect(own).not.toBe(companyId);
    expect(await filtered("q=ada")).toEqual([]);
  });

  it("an unknown list in a write is 404 NOT_FOUND", async () => {
    const response = await post("/mail/v1/contacts", { email: "l@example.com", listIds: [crypto.randomUUID()] });
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorJson).error.code).toBe("NOT_FOUND");
  });

  it("another company's contact and list are never visible or writable", async () => {
    const other = await h.newCompanyWithKey([...ALL_SCOPES, "mail.admin"], "Other Co");
    const theirs = await upsert({ email: "secret@example.com", firstName: "Theirs" }, other.secret);
    const theirList = ((await (await post("/mail/v1/lists", { name: "Theirs" }, other.secret)).json()) as { list: { id: string } }).list;

    expect((await get(`/mail/v1/contacts/${theirs.id}`)).status).toBe(404);
    expect((await get("/mail/v1/contacts/secret@example.com")).status).toBe(404);
    // Writing the same address creates this company's own contact; theirs is untouched.
    const mine = await upsert({ email: "secret@example.com", firstName: "Mine" });
    expect(mine.created).toBe(true);
    expect(((await get(`/mail/v1/contacts/${theirs.id}`, other.secret)).body as ContactJson).firstName).toBe("Theirs");
    expect((await post("/mail/v1/contacts", { email: "x@example.com", listIds: [theirList.id] })).status).toBe(404);
    const patch = await h.fetch(`/mail/v1/lists/${theirList.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Stolen" }),
    });
    expect(patch.status).toBe(404);
    const del = await h.fetch(`/mail/v1/lists/${theirList.id}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
    expect(del.status).toBe(404);
    const lists = (await get("/mail/v1/lists", other.secret)).body as { items: { id: string; name: string }[] };
    expect(lists.items).toEqual([expect.objectContaining({ id: theirList.id, name: "Theirs" })]);
  });

  it("lists: create (201), list, rename, delete under /mail/v1/lists", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.admin", "mail.contacts.write"], "Lists Ltd");
    const created = await post("/mail/v1/lists", { name: "Weekly" }, secret);
    expect(created.status).toBe(201);
    const { list } = (await created.json()) as { list: { id: string; name: string; createdAt: string } };
    expect(list).toMatchObject({ name: "Weekly", id: expect.any(String), createdAt: expect.any(String) });
    expect((await post("/mail/v1/lists", { name: "WEEKLY" }, secret)).status).toBe(400);

    const renamed = await h.fetch(`/mail/v1/lists/${list.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Monthly" }),
    });
    expect(renamed.status).toBe(200);
    expect(((await renamed.json()) as { list: { name: string } }).list.name).toBe("Monthly");

    const member = await upsert({ email: "member@example.com", listIds: [list.id] }, secret);
    expect(member.listIds).toEqual([list.id]);
    const deleted = await h.fetch(`/mail/v1/lists/${list.id}`, { method: "DELETE", headers: { authorization: `Bearer ${secret}` } });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: list.id });
    expect(((await get("/mail/v1/lists", secret)).body as { items: unknown[] }).items).toEqual([]);
  });

  it("each call needs its scope: contacts read / write, lists mail.admin", async () => {
    const reader = await h.newCompanyWithKey(["mail.contacts.read"], "Reader");
    const writer = await h.newCompanyWithKey(["mail.contacts.write"], "Writer");
    expect((await post("/mail/v1/contacts", { email: "a@example.com" }, reader.secret)).status).toBe(403);
    expect((await get("/mail/v1/contacts", writer.secret)).status).toBe(403);
    expect((await get("/mail/v1/contacts", reader.secret)).status).toBe(200);
    expect((await post("/mail/v1/contacts", { email: "a@example.com" }, writer.secret)).status).toBe(200);
    expect((await get("/mail/v1/lists", writer.secret)).status).toBe(403);
    expect((await post("/mail/v1/lists", { name: "x" }, reader.secret)).status).toBe(403);
  });

  it("a write with an Idempotency-Key replays its first answer", async () => {
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": crypto.randomUUID() };
    const body = JSON.stringify({ email: "idem@example.com" });
    const first = await h.fetch("/mail/v1/contacts", { method: "POST", headers, body });
    const again = await h.fetch("/mail/v1/contacts", { method: "POST", headers, body });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
  });

  it("writes a contact.updated event to the outbox with the change", async () => {
    const { id } = await upsert({ email: "evented@example.com" });
    await upsert({ email: "evented@example.com", consent: { source: "form" } });
    const { rows } = await h.db.query<{ data: Record<string, unknown> }>(
      `select data from webhook_event where company_id = $1 and event = 'contact.updated' and data->>'contactId' = $2 order by occurred_at`,
      [companyId, id],
    );
    expect(rows.map((r) => [r.data.change, r.data.status, r.data.source])).toEqual([
      ["created", "pending", "api"],
      ["consent", "subscribed", "api"],
    ]);
  });

  it("serves gRPC too: tags and listIds as lists, status as the enum", async () => {
    const auth: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${key}`);
      return next(req);
    };
    const client = createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [auth] }));
    const strings = (...values: string[]) =>
      create(ListValueSchema, { values: values.map((v) => create(ValueSchema, { kind: { case: "stringValue", value: v } })) });
    const answer = await client.upsertContact({ email: "grpc@example.com", tags: strings("a", "b"), status: ContactStatus.UNSUBSCRIBED });
    expect(answer).toMatchObject({ email: "grpc@example.com", tags: ["a", "b"], status: ContactStatus.UNSUBSCRIBED, created: true });
    expect((await client.getContact({ id: "GRPC@example.com" })).contact?.id).toBe(answer.id);
    const error = await client.upsertContact({ email: "grpc@example.com", status: ContactStatus.BOUNCED }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
