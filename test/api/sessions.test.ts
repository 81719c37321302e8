import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemberRole, MembersService } from "../../src/gen/mail/v1/members_pb.js";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { Browser, browserHeaders, connectCall, newCompany, reasonOf, sessionCookieOf, signedIn, tokenOf } from "./members-support.ts";

describe("sign-in links and member sessions", () => {
  let h: ApiHarness;
  let companyId: string;

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
    companyId = await newCompany(h, "Session Co");
    await h.forCompany(MembersService, companyId).inviteMember({ email: "owner@session.example", displayName: "Olga Owner", role: MemberRole.OWNER });
  });
  afterAll(async () => h?.close());

  const link = async (email = "owner@session.example") => tokenOf((await h.admin.createSignInLink({ companyId, email })).signInUrl);

  it("exchanges a link for a session cookie (HttpOnly, Secure, SameSite=Strict, __Host-) and describes the session", async () => {
    const browser = new Browser(h);
    const answer = await browser.exchange(await link());
    expect(answer.status).toBe(200);
    const cookie = sessionCookieOf(answer.headers);
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.attributes).toMatch(/Path=\//);
    expect(cookie?.attributes).toMatch(/HttpOnly/);
    expect(cookie?.attributes).toMatch(/Secure/);
    expect(cookie?.attributes).toMatch(/SameSite=Strict/);
    expect(cookie?.attributes).not.toMatch(/Domain=/);

    const session = await browser.call("mail.v1.SessionService", "GetSession");
    expect(session.status).toBe(200);
    const body = session.body.session as { member: { email: string; displayName: string; role: string }; company: { id: string; name: string }; scopes: string[] };
    expect(body.member).toMatchObject({ email: "owner@session.example", displayName: "Olga Owner", role: "MEMBER_ROLE_OWNER" });
    expect(body.company).toEqual({ id: companyId, name: "Session Co" });
    expect(body.scopes).toContain("mail.admin");
    expect(body.scopes).not.toContain("mail.transactional.send");
  });

  it("a link works once; unknown, used and expired links get the same 401 SIGN_IN_LINK_INVALID", async () => {
    const token = await link();
    expect((await new Browser(h).exchange(token)).status).toBe(200);
    const used = await new Browser(h).exchange(token);
    const unknown = await new Browser(h).exchange("A".repeat(43));
    const expiredToken = await link();
    await h.db.query(`update sign_in_link set expires_at = now() - interval '1 second' where used_at is null`);
    const expired = await new Browser(h).exchange(expiredToken);
    for (const answer of [used, unknown, expired]) {
      expect(answer.status).toBe(401);
      expect(reasonOf(answer)).toBe("SIGN_IN_LINK_INVALID");
      expect(answer.body.message).toBe(used.body.message);
      expect(sessionCookieOf(answer.headers)).toBeUndefined();
    }
  });

  it("stores neither the link's token nor the session's cookie value", async () => {
    const token = await link();
    const browser = new Browser(h);
    await browser.exchange(token);
    for (const table of ["sign_in_link", "member_session", "member", "audit_event"]) {
      const rows = await h.db.query<{ t: string }>(`select coalesce(string_agg(row_to_json(x)::text, ' '), '') as t from ${table} x`);
      expect(rows.rows[0]?.t ?? "").not.toContain(token);
      expect(rows.rows[0]?.t ?? "").not.toContain(browser.cookie ?? "-");
    }
  });

  it("gives a new session id at every sign-in (no fixation), and each one works", async () => {
    const first = new Browser(h);
    await first.exchange(await link());
    const second = new Browser(h);
    // A browser that already holds a session signs in again: a new cookie value.
    second.cookie = first.cookie;
    await second.exchange(await link());
    expect(second.cookie).not.toBe(first.cookie);
    expect((await first.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
    expect((await second.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
  });

  it("sign out ends the session and clears the cookie", async () => {
    const browser = new Browser(h);
    await browser.exchange(await link());
    const out = await browser.call("mail.v1.SessionService", "SignOut");
    expect(out.status).toBe(200);
    expect(sessionCookieOf(out.headers)?.attributes).toMatch(/Max-Age=0/);
    const after = await browser.call("mail.v1.SessionService", "GetSession");
    expect(after.status).toBe(401);
    expect(reasonOf(after)).toBe("AUTHENTICATION_REQUIRED");
  });

  it("ends a session after 30 idle minutes and 12 hours after sign-in", async () => {
    const idle = new Browser(h);
    await idle.exchange(await link());
    const old = new Browser(h);
    await old.exchange(await link());
    expect((await idle.call("mail.v1.SessionService", "GetSession")).status).toBe(200);
    await h.db.query(`update member_session set last_seen_at = now() - interval '31 minutes' where secret_hash = sha256($1::text::bytea)`, [idle.cookie]);
    await h.db.query(`update member_session set expires_at = now() - interval '1 second' where secret_hash = sha256($1::text::bytea)`, [old.cookie]);
    expect((await idle.call("mail.v1.SessionService", "GetSession")).status).toBe(401);
    expect((await old.call("mail.v1.SessionService", "GetSession")).status).toBe(401);
  });

  it("refuses session calls that are cross-origin, lack the Connect protocol header, or use GET", async () => {
    const browser = await signedIn(h, companyId, "csrf@session.example", "admin");
    const victim = (await h.forCompany(MembersService, companyId).inviteMember({ email: "victim@session.example", role: MemberRole.OWNER })).member?.id ?? "";
    const path = "/mail.v1.MembersService/RemoveMember";
    const base = browserHeaders(browser.origin, browser.cookie, browser.address);

    const crossOrigin = await connectCall(h.app.httpUrl, path, { id: victim }, { ...base, origin: "https://evil.example" });
    const noOrigin = await connectCall(h.app.httpUrl, path, { id: victim }, Object.fromEntries(Object.entries(base).filter(([k]) => k !== "origin")));
    const noHeader = await connectCall(
      h.app.httpUrl,
      path,
      { id: victim },
      Object.fromEntries(Object.entries(base).filter(([k]) => k !== "connect-protocol-version")),
    );
    // A form post: text/plain, no custom header.
    const formPost = await fetch(new URL(path, h.app.httpUrl), {
      method: "POST",
      headers: { "content-type": "text/plain", origin: "https://evil.example", cookie: base.cookie ?? "" },
      body: JSON.stringify({ id: victim }),
    });
    const query = new URLSearchParams({ connect: "v1", encoding: "json", message: JSON.stringify({ id: victim }) });
    const get = await connectCall(h.app.httpUrl, `${path}?${query.toString()}`, undefined, base, "GET");
    const getSession = await connectCall(h.app.httpUrl, `/mail.v1.SessionService/GetSession?${new URLSearchParams({ connect: "v1", encoding: "json", message: "{}" }).toString()}`, undefined, base, "GET");

    for (const answer of [crossOrigin, noOrigin, noHeader]) {
      expect(answer.status).toBe(403);
      expect(reasonOf(answer)).toBe("FORBIDDEN");
    }
    expect(formPost.status).toBeGreaterThanOrEqual(400);
    expect(get.status).toBeGreaterThanOrEqual(400);
    expect(getSession.status).toBeGreaterThanOrEqual(400);
    // No CORS: nothing allows another origin to read an answer.
    expect(crossOrigin.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(new URL(path, h.app.httpUrl), {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST", "access-control-request-headers": "connect-protocol-version,content-type" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();

    // The victim is still a member: none of the refused calls changed anything.
    const list = await browser.call("mail.v1.MembersService", "ListMembers");
    expect((list.body.items as { id: string }[]).map((m) => m.id)).toContain(victim);
  });

  it("the sign-in exchange itself follows the browser rules (no login CSRF)", async () => {
    const token = await link();
    const crossOrigin = await connectCall(h.app.httpUrl, "/mail.v1.SessionService/ExchangeSignInLink", { token }, { ...browserHeaders("https://evil.example") });
    expect(crossOrigin.status).toBe(403);
    expect(sessionCookieOf(crossOrigin.headers)).toBeUndefined();
    // The link was not spent by the refused call.
    expect((await new Browser(h).exchange(token)).status).toBe(200);
  });

  it("rate limits sign-in attempts per client address, whatever the token", async () => {
    const browser = new Browser(h, "198.51.100.77");
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push(await browser.exchange("B".repeat(42) + String(i % 10)));
    expect(answers.slice(0, 10).every((a) => a.status === 401)).toBe(true);
    expect(answers[10]?.status).toBe(429);
    expect(reasonOf(answers[10] as never)).toBe("RATE_LIMITED");
    // Another address is not affected.
    expect((await new Browser(h, "198.51.100.78").exchange(await link())).status).toBe(200);
  });
});
