import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole, MembersService } from "../../src/gen/mail/v1/members_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { h2cRequest } from "./doors.ts";
import { Browser, browserHeaders, connectCall, newCompany, reasonOf, SESSION_COOKIE, signedIn, tokenOf } from "./members-support.ts";

/**
 * The member and session doors played as an attacker inside the company
 * would play them, over real HTTP: each case is an attack that worked
 * before and is refused now (docs/security.md, the members' threat model).
 */

type MemberJson = { id: string; email: string; role: string };

describe("member doors: what an administrator can do to owners and other members", () => {
  let h: ApiHarness;
  let companyId: string;
  let owner: Browser;
  let admin: Browser;

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
    companyId = await newCompany(h, "Doors Co");
    owner = await signedIn(h, companyId, "owner@doors.example", "owner");
    admin = await signedIn(h, companyId, "admin@doors.example", "admin");
  });
  afterAll(async () => h?.close());

  const memberId = async (email: string): Promise<string> => {
    const list = await owner.call("mail.v1.MembersService", "ListMembers");
    const found = (list.body.items as MemberJson[]).find((m) => m.email === email);
    if (!found) throw new Error(`no member ${email}`);
    return found.id;
  };

  it("inviting the owner's address answers 409 MEMBER_ALREADY_EXISTS with no link, whatever role is asked", async () => {
    for (const role of ["MEMBER_ROLE_MEMBER", "MEMBER_ROLE_ADMIN"]) {
      const answer = await admin.call("mail.v1.MembersService", "InviteMember", { email: "Owner@Doors.example", role });
      expect(answer.status, role).toBe(409);
      expect(reasonOf(answer)).toBe("MEMBER_ALREADY_EXISTS");
      expect(JSON.stringify(answer.body)).not.toMatch(/sign-in#token=/);
    }
    // Nor another admin's account.
    const other = await signedIn(h, companyId, "other-admin@doors.example", "admin");
    const again = await admin.call("mail.v1.MembersService", "InviteMember", { email: "other-admin@doors.example" });
    expect(again.status).toBe(409);
    // The owner and the other admin still are who they were.
    expect((await owner.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
    expect((await other.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
  });

  it("an invite link for a new member signs in with the invited role only, never above the inviter's, and the audit log says it was shown", async () => {
    const asOwner = await admin.call("mail.v1.MembersService", "InviteMember", { email: "would-be-owner@doors.example", role: "MEMBER_ROLE_OWNER" });
    expect(asOwner.status).toBe(403);
    expect(reasonOf(asOwner)).toBe("FORBIDDEN");

    const invited = await admin.call("mail.v1.MembersService", "InviteMember", { email: "new-member@doors.example", role: "MEMBER_ROLE_MEMBER" });
    expect(invited.status).toBe(200);
    expect((invited.body.member as MemberJson).role).toBe("MEMBER_ROLE_MEMBER");
    const newcomer = new Browser(h);
    expect((await newcomer.exchange(tokenOf(String(invited.body.signInUrl)))).status).toBe(200);
    const session = await newcomer.call("mail.v1.SessionService", "GetSession");
    expect((session.body.session as { member: { role: string } }).member.role).toBe("MEMBER_ROLE_MEMBER");

    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "member.invited" });
    const rows = (audit.body.items as Array<{ actor: string; details: string }>).map((item) => ({
      actor: item.actor,
      details: JSON.parse(item.details) as Record<string, unknown>,
    }));
    const row = rows.find((item) => item.details.email === "new-member@doors.example");
    expect(row?.actor).toBe("admin@doors.example");
    expect(row?.details).toMatchObject({ role: "member", linkShown: true });
  });

  it("a pending owner (added, never signed in) cannot be re-invited by an admin to get their link", async () => {
    await h.forCompany(MembersService, companyId).inviteMember({ email: "pending-owner@doors.example", role: MemberRole.OWNER });
    const answer = await admin.call("mail.v1.MembersService", "InviteMember", { email: "pending-owner@doors.example" });
    expect(answer.status).toBe(409);
    expect(JSON.stringify(answer.body)).not.toMatch(/sign-in#token=/);
    // An owner may re-invite them: a fresh link, with their own role.
    const byOwner = await owner.call("mail.v1.MembersService", "InviteMember", { email: "pending-owner@doors.example" });
    expect(byOwner.status).toBe(200);
    expect((byOwner.body.member as MemberJson).role).toBe("MEMBER_ROLE_OWNER");
  });

  it("an admin changes nothing of an owner: neither their name nor their sessions", async () => {
    const ownerId = await memberId("owner@doors.example");
    const renamed = await admin.call("mail.v1.MembersService", "UpdateMember", { id: ownerId, displayName: "Not the owner" });
    expect(renamed.status).toBe(403);
    const ended = await admin.call("mail.v1.MembersService", "EndMemberSessions", { id: ownerId });
    expect(ended.status).toBe(403);
    expect((await owner.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
    const list = await owner.call("mail.v1.MembersService", "ListMembers");
    const me = (list.body.items as Array<MemberJson & { displayName?: string }>).find((m) => m.email === "owner@doors.example");
    expect(me?.displayName ?? "").not.toBe("Not the owner");
    // An admin still manages plain members.
    const memberOnly = await memberId("new-member@doors.example");
    expect((await admin.call("mail.v1.MembersService", "EndMemberSessions", { id: memberOnly })).status).toBe(200);
  });

  it("an admin cannot mint a sending key by rotating one: 403, and no secret", async () => {
    const { keyId } = await h.newKey(companyId, ["mail.transactional.send"], "backend sender");
    const rotated = await admin.call("mail.v1.ApiKeysService", "RotateApiKey", { id: keyId });
    expect(rotated.status).toBe(403);
    expect(reasonOf(rotated)).toBe("FORBIDDEN");
    expect(rotated.body.secret).toBeUndefined();
    // A key the admin could have created is rotated as before.
    const { keyId: readKey } = await h.newKey(companyId, ["mail.events.read"], "reader");
    const ok = await admin.call("mail.v1.ApiKeysService", "RotateApiKey", { id: readKey });
    expect(ok.status).toBe(200);
    expect(String(ok.body.secret)).toMatch(/^tml_/);
  });

  it("session calls are refused with GET, PATCH and DELETE on the JSON routes (POST only)", async () => {
    const headers = browserHeaders(owner.origin, owner.cookie, owner.address);
    const listed = await fetch(new URL("/mail/v1/messages", h.app.httpUrl), { method: "GET", headers });
    expect(listed.status).toBe(403);
    const memberOnly = await memberId("new-member@doors.example");
    const removed = await fetch(new URL(`/mail/v1/members/${memberOnly}`, h.app.httpUrl), { method: "DELETE", headers });
    expect(removed.status).toBe(403);
    expect(((await removed.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    const patched = await fetch(new URL(`/mail/v1/members/${memberOnly}`, h.app.httpUrl), {
      method: "PATCH",
      headers,
      body: JSON.stringify({ displayName: "x" }),
    });
    expect(patched.status).toBe(403);
    expect(await memberId("new-member@doors.example")).toBe(memberOnly);
  });

  it("the Origin check compares scheme, host and port", async () => {
    const url = new URL(h.app.httpUrl);
    for (const origin of [`https://${url.host}`, `http://${url.hostname}:1`, "http://evil.example"]) {
      const answer = await connectCall(h.app.httpUrl, "/mail.v1.SessionService/GetSession", {}, browserHeaders(origin, owner.cookie, owner.address));
      expect(answer.status, origin).toBe(403);
      expect(reasonOf(answer)).toBe("FORBIDDEN");
    }
    expect((await owner.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
  });

  it("a foreign Origin on the h2c listener answers 403, never 500, for session calls and the sign-in exchange", async () => {
    const base = {
      ":method": "POST",
      "content-type": "application/json",
      "connect-protocol-version": "1",
      origin: "http://evil.example",
    };
    const session = await h2cRequest(h.app.grpcUrl, { ...base, ":path": "/mail.v1.SessionService/GetSession", cookie: `${SESSION_COOKIE}=${owner.cookie ?? ""}` }, "{}");
    expect(session.status).toBe(403);
    const exchange = await h2cRequest(h.app.grpcUrl, { ...base, ":path": "/mail.v1.SessionService/ExchangeSignInLink" }, JSON.stringify({ token: "x".repeat(43) }));
    expect(exchange.status).toBe(403);
    // Our own origin on h2c passes the browser rules (and reaches the session check).
    const own = await h2cRequest(
      h.app.grpcUrl,
      { ...base, origin: new URL(h.app.grpcUrl).origin, ":path": "/mail.v1.SessionService/GetSession", cookie: `${SESSION_COOKIE}=${owner.cookie ?? ""}` },
      "{}",
    );
    expect(own.status).toBe(200);
  });

  it("a company without the mail API: its screen reads and manages members, changes nothing else, and its keys answer FEATURE_NOT_ENTITLED", async () => {
    const { company } = await h.admin.createCompany({ name: "No API Co", entitlements: { api: false, smtp: false } });
    const unentitled = company?.id ?? "";
    const boss = await signedIn(h, unentitled, "boss@no-api.example", "owner");
    for (const [service, method] of [
      ["mail.v1.MailService", "ListMessages"],
      ["mail.v1.ApiKeysService", "ListApiKeys"],
      ["mail.v1.WebhooksService", "ListWebhookEndpoints"],
      ["mail.v1.AuditService", "ListAuditEvents"],
    ] as const) {
      expect((await boss.call(service, method)).status, `${service}/${method}`).toBe(200);
    }
    expect((await boss.call("mail.v1.MembersService", "InviteMember", { email: "colleague@no-api.example" })).status).toBe(200);
    for (const [service, method, body] of [
      ["mail.v1.ApiKeysService", "CreateApiKey", { name: "sender", scopes: ["mail.events.read"] }],
      ["mail.v1.WebhooksService", "CreateWebhookEndpoint", { url: "https://hooks.example/x", events: ["sent"] }],
      ["mail.v1.ListsService", "CreateContactList", { name: "Customers" }],
      ["mail.v1.TemplatesService", "PutTemplate", { name: "receipt", subject: "Hi", html: "<p>Hi</p>" }],
    ] as const) {
      const refused = await boss.call(service, method, body);
      expect(refused.status, `${service}/${method}`).toBe(403);
      expect(reasonOf(refused)).toBe("FEATURE_NOT_ENTITLED");
    }
    // The operator grants it a key all the same: the key is refused (spec: FEATURE_NOT_ENTITLED).
    const { secret } = await h.newKey(unentitled, ["mail.events.read"]);
    const asKey = await h.fetch("/mail/v1/me", bearer(secret));
    expect(asKey.status).toBe(403);
    expect(((await asKey.json()) as { error: { code: string } }).error.code).toBe("FEATURE_NOT_ENTITLED");
  });

  it("API keys still answer as before on the JSON routes", async () => {
    const { secret } = await h.newKey(companyId, ["mail.events.read"]);
    expect((await h.fetch("/mail/v1/messages", bearer(secret))).status).toBe(200);
  });
});

describe("member doors: the service's own mail is never readable", () => {
  const SYSTEM_COMPANY = "5e5e5e5e-0000-4000-8000-0000000000d0";
  let smtp: SMTPServer;
  const received: Array<{ rcptTo: string[]; raw: string }> = [];
  let h: SendingHarness;
  let companyId: string;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          received.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString("utf8") });
          callback(null, "2.0.0 Ok: queued");
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    h = await startSendingHarness({
      trustProxy: true,
      systemSenderCompanyId: SYSTEM_COMPANY,
      emailProvider: "smtp",
      smtp: { host: "127.0.0.1", port: (smtp.server.address() as AddressInfo).port, secure: false, user: undefined, password: undefined },
    });
    await h.db.query(`insert into company (id, name) values ($1, 'System')`, [SYSTEM_COMPANY]);
    const domain = await h.admin.createSendingDomain({ companyId: SYSTEM_COMPANY, domain: "system-doors.example" });
    await h.admin.verifySendingDomain({ companyId: SYSTEM_COMPANY, domainId: domain.domain?.id ?? "", override: true });
    await h.admin.createSender({ companyId: SYSTEM_COMPANY, email: "no-reply@system-doors.example", makeDefault: true });
    await h.admin.adjustCredits({ companyId: SYSTEM_COMPANY, amount: 100n, note: "sign-in emails" });
    companyId = await newCompany(h, "Customer Co");
  });
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("an invite is emailed to the invitee alone; a member of the system company sees it in the log but never its content", async () => {
    const customerOwner = await signedIn(h, companyId, "boss@customer-doors.example", "owner");
    const invited = await customerOwner.call("mail.v1.MembersService", "InviteMember", { email: "newcomer@customer-doors.example", role: "MEMBER_ROLE_ADMIN" });
    expect(invited.status).toBe(200);
    expect(invited.body.emailed).toBe(true);

    const row = await h.db.query<{ id: string; html: string; text_body: string; system: boolean }>(
      `select id, html, text_body, system from message where recipient = 'newcomer@customer-doors.example'`,
    );
    const message = row.rows[0];
    expect(message?.system).toBe(true);
    // At rest the body is sealed: no sign-in link in the database.
    expect(`${message?.html ?? ""} ${message?.text_body ?? ""}`).not.toMatch(/sign-in|token=/);

    // The email reaches the invitee, and its link signs them in with the invited role.
    await expect.poll(() => received.find((r) => r.rcptTo.includes("newcomer@customer-doors.example")), { timeout: 30_000 }).toBeTruthy();
    const mail = received.find((r) => r.rcptTo.includes("newcomer@customer-doors.example"));
    expect(mail?.rcptTo).toEqual(["newcomer@customer-doors.example"]);
    const parsed = await simpleParser(mail?.raw ?? "");
    const link = /https?:\/\/\S+\/admin\/sign-in#token=[A-Za-z0-9_-]{43}/.exec(parsed.text ?? "")?.[0] ?? "";
    expect(link).not.toBe("");
    const newcomer = new Browser(h);
    expect((await newcomer.exchange(tokenOf(link))).status).toBe(200);
    const session = await newcomer.call("mail.v1.SessionService", "GetSession");
    expect((session.body.session as { member: { role: string } }).member.role).toBe("MEMBER_ROLE_ADMIN");

    // A plain member of the system company: the message is in its log, its content is withheld.
    const staff = await signedIn(h, SYSTEM_COMPANY, "staff@system-doors.example", "member");
    const content = await staff.call("mail.v1.MessageContentService", "GetMessageContent", { id: message?.id });
    expect(content.status).toBe(200);
    expect(content.body.withheld).toBe(true);
    expect(content.body.html).toBeUndefined();
    expect(content.body.text).toBeUndefined();
    expect(JSON.stringify(content.body)).not.toMatch(/token=/);
    // Nor through the operator, who reads content for a company the same way.
    const asOperator = await h.forCompany((await import("../../src/gen/mail/v1/message_content_pb.js")).MessageContentService, SYSTEM_COMPANY).getMessageContent({
      id: message?.id ?? "",
    });
    expect(asOperator.withheld).toBe(true);
    expect(asOperator.html).toBeUndefined();
  });

  it("re-inviting an existing member emails that member's own address and answers no link", async () => {
    const customerOwner = await signedIn(h, companyId, "second-boss@customer-doors.example", "owner");
    const admin = await signedIn(h, companyId, "an-admin@customer-doors.example", "admin");
    // The operator's invite emailed them when they joined; let that email arrive, and a minute pass
    // (at most one sign-in email per address per minute: test/api/members.test.ts covers that rule).
    const toBoss = () => received.filter((r) => r.rcptTo.includes("second-boss@customer-doors.example")).length;
    await expect.poll(toBoss, { timeout: 30_000 }).toBe(1);
    await h.db.query(`update member set last_link_emailed_at = now() - interval '2 minutes' where email = 'second-boss@customer-doors.example'`);
    const answer = await admin.call("mail.v1.MembersService", "InviteMember", { email: "second-boss@customer-doors.example" });
    expect(answer.status).toBe(200);
    expect(answer.body.emailed).toBe(true);
    expect(answer.body.signInUrl).toBeUndefined();
    expect((answer.body.member as MemberJson).role).toBe("MEMBER_ROLE_OWNER");
    await expect.poll(toBoss, { timeout: 30_000 }).toBe(2);
    expect(received.filter((r) => r.raw.includes("second-boss")).every((r) => r.rcptTo.join() === "second-boss@customer-doors.example")).toBe(true);
    expect((await customerOwner.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
  });
});
