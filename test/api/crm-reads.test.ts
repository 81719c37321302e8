import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { ReportsService } from "../../src/gen/mail/v1/reports_pb.js";
import { ALL_SCOPES, type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";
import { type Browser, reasonOf, signedIn } from "./members-support.ts";

/**
 * The reads the screen's contact, list and form pages stand on, each an
 * addition to the contract, over REST, gRPC (an API key) and the session
 * door (a member's browser): the message log's exact `recipient` filter,
 * the lists' `memberCount`, a contact's conversions
 * (GET /mail/v1/contacts/{contactId}/conversions) and the sign-ups per form
 * (GET /mail/v1/reports/signups). Each answers the caller's company only,
 * refuses a bad value naming its field, and holds to its scope.
 */
interface ErrorJson {
  error: { code: string; message: string };
}

interface Company {
  readonly companyId: string;
  readonly secret: string;
}

const EMAIL_FIELD = { name: "email", label: "Email", type: "email", required: true };

function withToken(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

function codeOf(error: unknown): Code | undefined {
  return error instanceof ConnectError ? error.code : undefined;
}

describe("the contact pages' reads over REST, gRPC and the session door", () => {
  let h: ApiHarness;
  let shop: Company;
  let rival: Company;
  let member: Browser;
  let admin: Browser;

  /** A company that can send (verified domain, default sender, credits) with a key of every scope. */
  async function sendingCompany(name: string): Promise<Company> {
    const { companyId, secret } = await h.newCompanyWithKey(ALL_SCOPES, name);
    const domainName = `${name.toLowerCase().replace(/\W/g, "")}.example`;
    const { domain } = await h.admin.createSendingDomain({ companyId, domain: domainName });
    await h.admin.verifySendingDomain({ companyId, domainId: domain?.id ?? "", override: true });
    await h.admin.createSender({ companyId, email: `mail@${domainName}`, name, makeDefault: true });
    await h.admin.adjustCredits({ companyId, amount: 100n, note: "test credits" });
    return { companyId, secret };
  }

  function post(path: string, body: unknown, secret: string): Promise<Response> {
    return h.fetch(path, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  }

  async function getJson<T>(path: string, secret: string, status = 200): Promise<T> {
    const response = await h.fetch(path, bearer(secret));
    const body = (await response.json()) as T;
    expect(response.status, `${path}: ${JSON.stringify(body)}`).toBe(status);
    return body;
  }

  async function send(company: Company, to: string, subject: string): Promise<string> {
    const response = await post("/mail/v1/send", { to, subject, html: `<p>${subject}</p>` }, company.secret);
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  async function upsertContact(company: Company, body: Record<string, unknown>): Promise<string> {
    const response = await post("/mail/v1/contacts", body, company.secret);
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  }

  function grpc<S extends typeof MailService | typeof ListsService | typeof ReportsService | typeof SignupFormsService>(service: S, secret: string) {
    return createClient(service, createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [withToken(secret)] }));
  }

  beforeAll(async () => {
    // No Temporal here: the messages stay queued (the log is what is read), and the relay's retries are not logged.
    h = await startApiHarness({}, { logger: { level: "error" } });
    shop = await sendingCompany("Shop");
    rival = await sendingCompany("Rival");
    member = await signedIn(h, shop.companyId, "reader@shop.example", "member");
    admin = await signedIn(h, shop.companyId, "boss@shop.example", "admin");
  });
  afterAll(async () => h?.close());

  describe("ListMessages `recipient`", () => {
    beforeAll(async () => {
      // The same address in three spellings, a longer address that contains it, and another company's mail to it.
      await send(shop, "Ada@Bücher.example", "first");
      await send(shop, "ada@xn--bcher-kva.example", "second");
      await send(shop, "ADA@BÜCHER.EXAMPLE", "third");
      await send(shop, "grada@bücher.example", "to someone else");
      await send(rival, "ada@bücher.example", "rival's");
    });

    it("finds the messages to the whole address, in any case or domain spelling, newest first (REST), where q matches parts", async () => {
      const page = await getJson<{ items: { subject: string; recipient: string }[]; nextCursor: string | null }>(
        `/mail/v1/messages?recipient=${encodeURIComponent("ada@BÜCHER.example")}`,
        shop.secret,
      );
      expect(page.items.map((m) => m.subject)).toEqual(["third", "second", "first"]);
      expect(page.nextCursor).toBeNull();
      // q is a substring: the other address matches it too.
      const partial = await getJson<{ items: unknown[] }>(`/mail/v1/messages?q=${encodeURIComponent("ada@xn--bcher-kva.example")}`, shop.secret);
      expect(partial.items).toHaveLength(4);
    });

    it("pages with a cursor bound to the address (another address's page refuses it, naming cursor)", async () => {
      const path = `/mail/v1/messages?limit=2&recipient=${encodeURIComponent("ada@bücher.example")}`;
      const first = await getJson<{ items: { subject: string }[]; nextCursor: string | null }>(path, shop.secret);
      expect(first.items.map((m) => m.subject)).toEqual(["third", "second"]);
      const cursor = encodeURIComponent(first.nextCursor ?? "");
      const second = await getJson<{ items: { subject: string }[]; nextCursor: string | null }>(`${path}&cursor=${cursor}`, shop.secret);
      expect(second.items.map((m) => m.subject)).toEqual(["first"]);
      expect(second.nextCursor).toBeNull();
      const elsewhere = await getJson<ErrorJson>(`/mail/v1/messages?limit=2&recipient=grada%40b%C3%BCcher.example&cursor=${cursor}`, shop.secret, 400);
      expect(elsewhere.error.code).toBe("VALIDATION_ERROR");
      expect(elsewhere.error.message).toMatch(/^cursor: /);
    });

    it("answers the same over gRPC and the session door, and a member reads it", async () => {
      const viaGrpc = await grpc(MailService, shop.secret).listMessages({ recipient: "ada@xn--bcher-kva.example" });
      expect(viaGrpc.items.map((m) => m.subject)).toEqual(["third", "second", "first"]);
      const viaSession = await member.call("mail.v1.MailService", "ListMessages", { recipient: "Ada@bücher.example" });
      expect(viaSession.status).toBe(200);
      expect((viaSession.body.items as { subject: string }[]).map((m) => m.subject)).toEqual(["third", "second", "first"]);
    });

    it("never shows another company's messages to the address", async () => {
      const page = await getJson<{ items: { subject: string }[] }>(`/mail/v1/messages?recipient=ada%40b%C3%BCcher.example`, rival.secret);
      expect(page.items.map((m) => m.subject)).toEqual(["rival's"]);
    });

    it("refuses a value that is not an address, or too long, naming recipient on every door", async () => {
      for (const value of ["ada", "ada@@bücher.example", `${"a".repeat(250)}@b.example`]) {
        const rest = await getJson<ErrorJson>(`/mail/v1/messages?recipient=${encodeURIComponent(value)}`, shop.secret, 400);
        expect(rest.error.code).toBe("VALIDATION_ERROR");
        expect(rest.error.message).toMatch(/^recipient: /);
        expect(codeOf(await grpc(MailService, shop.secret).listMessages({ recipient: value }).catch((e: unknown) => e))).toBe(Code.InvalidArgument);
        const session = await member.call("mail.v1.MailService", "ListMessages", { recipient: value });
        expect(session.status).toBe(400);
        expect(reasonOf(session)).toBe("VALIDATION_ERROR");
      }
      // An empty value (what `?recipient=` sends) is no filter.
      expect((await getJson<{ items: unknown[] }>("/mail/v1/messages?recipient=", shop.secret)).items).toHaveLength(4);
    });
  });

  describe("ListContactLists `memberCount`", () => {
    it("counts each list's contacts, whatever their status, on every answer; members may not read lists (mail.admin)", async () => {
      const created = await post("/mail/v1/lists", { name: "Weekly" }, shop.secret);
      expect(created.status).toBe(201);
      const weekly = ((await created.json()) as { list: { id: string; memberCount: number } }).list;
      expect(weekly.memberCount).toBe(0);
      const vip = (await grpc(ListsService, shop.secret).createContactList({ name: "VIP" })).list;
      expect(vip?.memberCount).toBe(0);
      const vipId = vip?.id ?? "";

      await upsertContact(shop, { email: "one@lists.example", listIds: [weekly.id, vipId] });
      await upsertContact(shop, { email: "two@lists.example", listIds: [weekly.id], status: "unsubscribed" });
      await upsertContact(shop, { email: "three@lists.example", listIds: [weekly.id] });
      await upsertContact(shop, { email: "three@lists.example", listIds: [vipId] });
      // Another company's contacts in lists of its own change nothing here.
      const rivalList = ((await (await post("/mail/v1/lists", { name: "Weekly" }, rival.secret)).json()) as { list: { id: string } }).list;
      await upsertContact(rival, { email: "one@lists.example", listIds: [rivalList.id] });

      const expected = [
        ["Weekly", 2],
        ["VIP", 2],
      ];
      const rest = await getJson<{ items: { name: string; memberCount: number }[] }>("/mail/v1/lists", shop.secret);
      expect(rest.items.map((l) => [l.name, l.memberCount])).toEqual(expected);
      expect((await grpc(ListsService, shop.secret).listContactLists({})).items.map((l) => [l.name, l.memberCount])).toEqual(expected);
      const viaSession = await admin.call("mail.v1.ListsService", "ListContactLists");
      expect(viaSession.status).toBe(200);
      expect((viaSession.body.items as { name: string; memberCount: number }[]).map((l) => [l.name, l.memberCount])).toEqual(expected);
      expect((await getJson<{ items: { memberCount: number }[] }>("/mail/v1/lists", rival.secret)).items.map((l) => l.memberCount)).toEqual([1]);

      const renamed = await admin.call("mail.v1.ListsService", "RenameContactList", { id: weekly.id, name: "Weekly news" });
      expect(renamed.status).toBe(200);
      expect(renamed.body.list).toMatchObject({ name: "Weekly news", memberCount: 2 });

      const refused = await member.call("mail.v1.ListsService", "ListContactLists");
      expect(refused.status).toBe(403);
      expect(reasonOf(refused)).toBe("FORBIDDEN");
      expect((await member.call("mail.v1.ListsService", "CreateContactList", { name: "Mine" })).status).toBe(403);
    });
  });

  describe("ListContactConversions (GET /mail/v1/contacts/{contactId}/conversions)", () => {
    let contactId: string;
    let otherContactId: string;

    beforeAll(async () => {
      const record = (body: Record<string, unknown>) =>
        post("/mail/v1/conversions", { eventType: "purchase", revenue: "10", ...body }, shop.secret).then((r) => expect(r.status).toBe(202));
      // Recorded by address before the address was a contact: still the contact's once it is one.
      await record({ eventId: "order-1", email: "Buyer@Conversions.example", revenue: "19.5" });
      contactId = await upsertContact(shop, { email: "buyer@conversions.example" });
      otherContactId = await upsertContact(shop, { email: "someone@conversions.example" });
      await record({ eventId: "order-2", contactId, revenue: "5", currency: "EUR" });
      await record({ eventId: "order-3", email: "buyer@conversions.example", eventType: "booking" });
      await record({ eventId: "order-4", contactId: otherContactId });
      await record({ eventId: "order-2", contactId, revenue: "5", currency: "EUR", status: "refunded" });
    });

    it("lists the contact's conversions, newest recorded first, over REST, gRPC and the session door (a member reads)", async () => {
      const rest = await getJson<{ items: { eventId: string; status: string; netRevenue: string; contactId: string | null }[]; nextCursor: string | null }>(
        `/mail/v1/contacts/${contactId}/conversions`,
        shop.secret,
      );
      expect(rest.items.map((c) => [c.eventId, c.status, c.netRevenue])).toEqual([
        ["order-3", "completed", "10"],
        ["order-2", "refunded", "0"],
        ["order-1", "completed", "19.5"],
      ]);
      expect(rest.nextCursor).toBeNull();
      const viaGrpc = await grpc(ReportsService, shop.secret).listContactConversions({ contactId });
      expect(viaGrpc.items.map((c) => c.eventId)).toEqual(["order-3", "order-2", "order-1"]);
      const viaSession = await member.call("mail.v1.ReportsService", "ListContactConversions", { contactId: contactId.toUpperCase() });
      expect(viaSession.status).toBe(200);
      expect((viaSession.body.items as { eventId: string }[]).map((c) => c.eventId)).toEqual(["order-3", "order-2", "order-1"]);
      expect((await getJson<{ items: { eventId: string }[] }>(`/mail/v1/contacts/${otherContactId}/conversions`, shop.secret)).items.map((c) => c.eventId)).toEqual([
        "order-4",
      ]);
    });

    it("pages by cursor; a cursor of one contact is refused for another (400 naming cursor)", async () => {
      const first = await getJson<{ items: { eventId: string }[]; nextCursor: string | null }>(`/mail/v1/contacts/${contactId}/conversions?limit=2`, shop.secret);
      expect(first.items.map((c) => c.eventId)).toEqual(["order-3", "order-2"]);
      const cursor = encodeURIComponent(first.nextCursor ?? "");
      const second = await getJson<{ items: { eventId: string }[]; nextCursor: string | null }>(
        `/mail/v1/contacts/${contactId}/conversions?limit=2&cursor=${cursor}`,
        shop.secret,
      );
      expect(second).toEqual({ items: [expect.objectContaining({ eventId: "order-1" })], nextCursor: null });
      const foreign = await getJson<ErrorJson>(`/mail/v1/contacts/${otherContactId}/conversions?cursor=${cursor}`, shop.secret, 400);
      expect(foreign.error.message).toMatch(/^cursor: /);
    });

    it("refuses a bad limit naming it, on every door", async () => {
      const rest = await getJson<ErrorJson>(`/mail/v1/contacts/${contactId}/conversions?limit=0`, shop.secret, 400);
      expect(rest.error).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringMatching(/^limit: /) });
      expect(codeOf(await grpc(ReportsService, shop.secret).listContactConversions({ contactId, limit: 101 }).catch((e: unknown) => e))).toBe(Code.InvalidArgument);
      expect((await member.call("mail.v1.ReportsService", "ListContactConversions", { contactId, limit: 0 })).status).toBe(400);
    });

    it("answers 404 for another company's contact, an unknown or a malformed id", async () => {
      for (const id of [contactId, randomUUID(), "not-an-id"]) {
        const rest = await getJson<ErrorJson>(`/mail/v1/contacts/${id}/conversions`, rival.secret, 404);
        expect(rest.error.code).toBe("NOT_FOUND");
        expect(codeOf(await grpc(ReportsService, rival.secret).listContactConversions({ contactId: id }).catch((e: unknown) => e))).toBe(Code.NotFound);
      }
      const rivalMember = await signedIn(h, rival.companyId, "reader@rival.example", "member");
      expect((await rivalMember.call("mail.v1.ReportsService", "ListContactConversions", { contactId })).status).toBe(404);
    });

    it("needs mail.events.read", async () => {
      const contactsOnly = await h.newKey(shop.companyId, ["mail.contacts.read", "mail.conversions.write"]);
      const refused = await getJson<ErrorJson>(`/mail/v1/contacts/${contactId}/conversions`, contactsOnly.secret, 403);
      expect(refused.error.code).toBe("FORBIDDEN");
      expect(codeOf(await grpc(ReportsService, contactsOnly.secret).listContactConversions({ contactId }).catch((e: unknown) => e))).toBe(Code.PermissionDenied);
    });
  });

  describe("CountSignups (GET /mail/v1/reports/signups)", () => {
    const since = new Date(Date.now() - 60 * 60_000);
    let newsletter: string;
    let offers: string;

    /** A sign-up on the hosted page, as a visitor's browser posts it (the page's own token). */
    async function signUp(publicId: string, email: string): Promise<void> {
      const page = await h.fetch(`/mail/v1/forms/${publicId}`);
      const token = /name="_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
      const response = await h.fetch(`/mail/v1/forms/${publicId}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _token: token, email }).toString(),
      });
      expect(response.status).toBe(200);
    }

    async function newForm(company: Company, name: string): Promise<string> {
      const response = await post("/mail/v1/forms", { name, fields: [EMAIL_FIELD], consentText: "Yes, please.", language: "en", doubleOptIn: false }, company.secret);
      expect(response.status).toBe(201);
      return ((await response.json()) as { form: { publicId: string } }).form.publicId;
    }

    beforeAll(async () => {
      newsletter = await newForm(shop, "Newsletter");
      offers = await newForm(shop, "Offers");
      const rivalForm = await newForm(rival, "Rival news");
      await upsertContact(shop, { email: "known@signups.example" });
      await signUp(newsletter, "new-one@signups.example");
      await signUp(newsletter, "new-two@signups.example");
      // An address that is a contact already: the page changes nothing, so nothing is counted.
      await signUp(newsletter, "known@signups.example");
      await signUp(offers, "new-three@signups.example");
      await signUp(rivalForm, "new-one@signups.example");
      // Another company's write naming this company's form as its consent source counts for nobody.
      await upsertContact(rival, { email: "spoof@signups.example", consent: { source: `form:${newsletter}` } });
    });

    it("counts each form's sign-ups in the window, over REST, gRPC and the session door (a member reads), active or not", async () => {
      const expected = [
        [newsletter, 2],
        [offers, 1],
      ].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
      const rest = await getJson<{ items: { publicId: string; signups: number }[] }>(`/mail/v1/reports/signups?since=${since.toISOString()}`, shop.secret);
      expect(rest.items.map((r) => [r.publicId, r.signups])).toEqual(expected);
      expect((await post(`/mail/v1/forms/${offers}/deactivate`, {}, shop.secret)).status).toBe(200);
      const viaGrpc = await grpc(SignupFormsService, shop.secret).countSignups({ since: timestampFromDate(since) });
      expect(viaGrpc.items.map((r) => [r.publicId, r.signups])).toEqual(expected);
      const viaSession = await member.call("mail.v1.SignupFormsService", "CountSignups", { since: since.toISOString() });
      expect(viaSession.status).toBe(200);
      expect((viaSession.body.items as { publicId: string; signups: number }[]).map((r) => [r.publicId, r.signups])).toEqual(expected);
      // Every time without bounds; none in a window that ended before.
      expect((await getJson<{ items: unknown[] }>("/mail/v1/reports/signups", shop.secret)).items).toHaveLength(2);
      expect((await getJson<{ items: unknown[] }>(`/mail/v1/reports/signups?until=${since.toISOString()}`, shop.secret)).items).toEqual([]);
      expect((await getJson<{ items: { signups: number }[] }>("/mail/v1/reports/signups", rival.secret)).items.map((r) => r.signups)).toEqual([1]);
    });

    it("refuses an end before the start naming until, and a bad time naming since", async () => {
      const backwards = await getJson<ErrorJson>(`/mail/v1/reports/signups?since=${since.toISOString()}&until=${since.toISOString()}`, shop.secret, 400);
      expect(backwards.error).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringMatching(/^until: /) });
      expect(codeOf(await grpc(SignupFormsService, shop.secret).countSignups({ since: timestampFromDate(since), until: timestampFromDate(new Date(0)) }).catch((e: unknown) => e))).toBe(
        Code.InvalidArgument,
      );
      const session = await member.call("mail.v1.SignupFormsService", "CountSignups", { since: since.toISOString(), until: since.toISOString() });
      expect(session.status).toBe(400);
      const garbage = await getJson<ErrorJson>("/mail/v1/reports/signups?since=yesterday", shop.secret, 400);
      expect(garbage.error.message).toMatch(/since/);
    });

    it("needs mail.events.read; a member counts but cannot create or deactivate forms", async () => {
      const contactsOnly = await h.newKey(shop.companyId, ["mail.contacts.read"]);
      expect((await getJson<ErrorJson>("/mail/v1/reports/signups", contactsOnly.secret, 403)).error.code).toBe("FORBIDDEN");
      expect(codeOf(await grpc(SignupFormsService, contactsOnly.secret).countSignups({}).catch((e: unknown) => e))).toBe(Code.PermissionDenied);
      const create = await member.call("mail.v1.SignupFormsService", "CreateForm", { name: "x", fields: [EMAIL_FIELD], consentText: "x", language: "en" });
      expect(create.status).toBe(403);
      expect((await member.call("mail.v1.SignupFormsService", "DeactivateForm", { publicId: newsletter })).status).toBe(403);
    });
  });
});
