import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole, MembersService } from "../../src/gen/mail/v1/members_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { Browser, browserHeaders, newCompany, reasonOf, signedIn, tokenOf } from "./members-support.ts";

type MemberJson = { id: string; email: string; role: string; disabled: boolean };

describe("company members and roles", () => {
  let h: ApiHarness;
  let companyId: string;
  let owner: Browser;

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
    companyId = await newCompany(h, "Members Co");
    owner = await signedIn(h, companyId, "first-owner@members.example", "owner");
  });
  afterAll(async () => h?.close());

  const memberId = async (email: string): Promise<string> => {
    const list = await owner.call("mail.v1.MembersService", "ListMembers");
    const found = (list.body.items as MemberJson[]).find((m) => m.email === email);
    if (!found) throw new Error(`no member ${email}`);
    return found.id;
  };

  it("an owner invites a member, who signs in with the link and gets the read scopes only", async () => {
    const invited = await owner.call("mail.v1.MembersService", "InviteMember", { email: "Reader@Members.example", displayName: "Rita", role: "MEMBER_ROLE_MEMBER" });
    expect(invited.status).toBe(200);
    expect(invited.body.emailed).toBeUndefined(); // false: no system sender here, the link is answered
    const url = String(invited.body.signInUrl);
    expect(url).toMatch(/\/admin\/sign-in#token=[A-Za-z0-9_-]{43}$/);
    expect((invited.body.member as MemberJson).email).toBe("reader@members.example");

    const reader = new Browser(h);
    expect((await reader.exchange(tokenOf(url))).status).toBe(200);
    const session = await reader.call("mail.v1.SessionService", "GetSession");
    expect((session.body.session as { scopes: string[] }).scopes.sort()).toEqual(["mail.contacts.read", "mail.events.read"]);
    // Mail access only: administration is refused for the member role.
    for (const [service, method] of [
      ["mail.v1.MembersService", "ListMembers"],
      ["mail.v1.ApiKeysService", "ListApiKeys"],
      ["mail.v1.AuditService", "ListAuditEvents"],
      ["mail.v1.WebhooksService", "ListWebhookEndpoints"],
    ] as const) {
      const refused = await reader.call(service, method);
      expect(refused.status, `${service}/${method}`).toBe(403);
      expect(reasonOf(refused)).toBe("FORBIDDEN");
    }
    // ...and the message log is readable (Mail access).
    expect((await reader.call("mail.v1.MailService", "ListMessages", {})).status).toBe(200);
  });

  it("at least one owner always remains", async () => {
    const self = await memberId("first-owner@members.example");
    for (const [method, body] of [
      ["UpdateMember", { id: self, role: "MEMBER_ROLE_ADMIN" }],
      ["UpdateMember", { id: self, disabled: true }],
      ["RemoveMember", { id: self }],
    ] as const) {
      const refused = await owner.call("mail.v1.MembersService", method, body);
      expect(refused.status, method).toBe(400);
      expect(reasonOf(refused)).toBe("VALIDATION_ERROR");
      expect(String(refused.body.message)).toMatch(/owner/);
    }
    // With a second owner, the first may step down.
    await owner.call("mail.v1.MembersService", "InviteMember", { email: "second-owner@members.example", role: "MEMBER_ROLE_OWNER" });
    const stepDown = await owner.call("mail.v1.MembersService", "UpdateMember", { id: self, role: "MEMBER_ROLE_ADMIN" });
    expect(stepDown.status).toBe(200);
    expect((stepDown.body.member as MemberJson).role).toBe("MEMBER_ROLE_ADMIN");
    // Now an admin: making owners is refused.
    const promote = await owner.call("mail.v1.MembersService", "UpdateMember", { id: self, role: "MEMBER_ROLE_OWNER" });
    expect(promote.status).toBe(403);
    // The operator restores the owner.
    await h.forCompany(MembersService, companyId).updateMember({ id: self, role: MemberRole.OWNER });
  });

  it("a removed member loses every session at once; a disabled one too; an owner ends a member's sessions", async () => {
    const removed = await signedIn(h, companyId, "removed@members.example", "admin");
    const disabled = await signedIn(h, companyId, "disabled@members.example", "member");
    const ended = await signedIn(h, companyId, "ended@members.example", "member");
    const endedToo = new Browser(h);
    await endedToo.exchange(tokenOf((await h.admin.createSignInLink({ companyId, email: "ended@members.example" })).signInUrl));
    for (const b of [removed, disabled, ended, endedToo]) expect((await b.call("mail.v1.SessionService", "GetSession")).status).toBe(200);

    expect((await owner.call("mail.v1.MembersService", "RemoveMember", { id: await memberId("removed@members.example") })).status).toBe(200);
    expect((await owner.call("mail.v1.MembersService", "UpdateMember", { id: await memberId("disabled@members.example"), disabled: true })).status).toBe(200);
    const end = await owner.call("mail.v1.MembersService", "EndMemberSessions", { id: await memberId("ended@members.example") });
    expect(end.status).toBe(200);
    expect(end.body.ended).toBe(2);

    expect((await removed.call("mail.v1.MembersService", "ListMembers")).status).toBe(401);
    for (const b of [disabled, ended, endedToo]) {
      const answer = await b.call("mail.v1.SessionService", "GetSession");
      expect(answer.status).toBe(401);
      expect(reasonOf(answer)).toBe("AUTHENTICATION_REQUIRED");
    }
    // A disabled member cannot sign in again until enabled.
    const refusedLink = await h.admin.createSignInLink({ companyId, email: "disabled@members.example" }).catch((e: unknown) => e);
    expect(refusedLink).toBeInstanceOf(ConnectError);
  });

  it("another company's member ids answer 404 over the session door, REST and gRPC", async () => {
    const other = await newCompany(h, "Other Co");
    const foreign = (await h.forCompany(MembersService, other).inviteMember({ email: "foreign@other.example" })).member?.id ?? "";
    for (const [method, body] of [
      ["UpdateMember", { id: foreign, role: "MEMBER_ROLE_ADMIN" }],
      ["RemoveMember", { id: foreign }],
      ["EndMemberSessions", { id: foreign }],
    ] as const) {
      const answer = await owner.call("mail.v1.MembersService", method, body);
      expect(answer.status, method).toBe(404);
      expect(reasonOf(answer)).toBe("NOT_FOUND");
    }
    // REST (the session cookie under the same browser rules: a POST route).
    const rest = await h.fetch(`/mail/v1/members/${foreign}/end-sessions`, {
      method: "POST",
      headers: browserHeaders(owner.origin, owner.cookie, owner.address),
      body: "{}",
    });
    expect(rest.status).toBe(404);
    expect(((await rest.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    // gRPC: an operator acting for this company.
    const grpc = createClient(MembersService, createGrpcTransport({ baseUrl: h.app.operatorUrl }));
    const error = await grpc
      .removeMember({ id: foreign }, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": companyId } })
      .catch((e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.NotFound);
    // The foreign member is still there.
    const list = await grpc.listMembers({}, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": other } });
    expect(list.items.map((m) => m.id)).toEqual([foreign]);
  });

  it("pages the members oldest first: `limit` and `nextCursor`, a cursor bound to its company", async () => {
    const all = await owner.call("mail.v1.MembersService", "ListMembers", { limit: 100 });
    const ids = (all.body.items as MemberJson[]).map((m) => m.id);
    expect(ids.length).toBeGreaterThan(2);
    expect(ids[0]).toBe(await memberId("first-owner@members.example"));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await owner.call("mail.v1.MembersService", "ListMembers", { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      seen.push(...(page.body.items as MemberJson[]).map((m) => m.id));
      cursor = page.body.nextCursor as string | undefined;
    } while (cursor);
    expect(seen).toEqual(ids);
    // The operator of another company cannot start from this company's cursor.
    const first = await owner.call("mail.v1.MembersService", "ListMembers", { limit: 1 });
    const other = await newCompany(h, "Cursor Thief Co");
    const refused = await h
      .forCompany(MembersService, other)
      .listMembers({ cursor: String(first.body.nextCursor) })
      .catch((e: unknown) => e);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
  });

  it("API keys cannot manage members, even with mail.admin (403 FORBIDDEN)", async () => {
    const key = await h.newKey(companyId, ["mail.admin"]);
    const listed = await h.fetch("/mail/v1/members", bearer(key.secret));
    expect(listed.status).toBe(403);
    const invite = await h.fetch("/mail/v1/members", { method: "POST", ...bearer(key.secret, { "content-type": "application/json" }), body: JSON.stringify({ email: "x@members.example" }) });
    expect(invite.status).toBe(403);
    expect(((await invite.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
  });
});

describe("sign-in links by email from the system sender", () => {
  const SYSTEM_COMPANY = "5e5e5e5e-0000-4000-8000-000000000001";
  let h: ApiHarness;
  let companyId: string;

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true, systemSenderCompanyId: SYSTEM_COMPANY });
    await h.db.query(`insert into company (id, name) values ($1, 'System')`, [SYSTEM_COMPANY]);
    const domain = await h.admin.createSendingDomain({ companyId: SYSTEM_COMPANY, domain: "system.example" });
    await h.admin.verifySendingDomain({ companyId: SYSTEM_COMPANY, domainId: domain.domain?.id ?? "", override: true });
    await h.admin.createSender({ companyId: SYSTEM_COMPANY, email: "no-reply@system.example", makeDefault: true });
    await h.admin.adjustCredits({ companyId: SYSTEM_COMPANY, amount: 100n, note: "sign-in emails" });
    companyId = await newCompany(h, "Mailed Co");
  });
  afterAll(async () => h?.close());

  it("emails the invite through the send path, at most once per address per minute", async () => {
    const owner = await signedIn(h, companyId, "boss@mailed.example", "owner");
    const invited = await owner.call("mail.v1.MembersService", "InviteMember", { email: "new@mailed.example" });
    expect(invited.status).toBe(200);
    expect(invited.body.emailed).toBe(true);
    expect(invited.body.signInUrl).toBeUndefined();
    const sent = await h.db.query<{ recipient: string; subject: string; company_id: string }>(
      `select recipient, subject, company_id from message where recipient = 'new@mailed.example'`,
    );
    expect(sent.rows).toHaveLength(1);
    expect(sent.rows[0]?.company_id).toBe(SYSTEM_COMPANY);
    expect(sent.rows[0]?.subject).toMatch(/Mailed Co/);

    const again = await owner.call("mail.v1.MembersService", "InviteMember", { email: "new@mailed.example" });
    expect(again.status).toBe(429);
    expect(reasonOf(again)).toBe("RATE_LIMITED");
    expect((await h.db.query(`select 1 from message where recipient = 'new@mailed.example'`)).rowCount).toBe(1);
  });
});
