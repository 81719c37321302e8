import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SuppressionReason, SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";
import { type Browser, newCompany, reasonOf, signedIn } from "./members-support.ts";

/**
 * The company's suppression list over every door: REST and gRPC with API
 * keys, the session door (Connect, as the screen calls it) for each role,
 * and an operator acting for the company. Members read; owners, admins and
 * keys with mail.admin add and remove; a complaint is removed by the owner
 * role only. Every change is audited; another company's addresses are 404.
 */

interface SuppressionJson {
  email: string;
  reason: string;
  messageId: string | null;
  createdAt: string;
}

interface ErrorJson {
  error: { code: string; message: string };
}

describe("the company's suppression list (SuppressionsService, /mail/v1/suppressions)", () => {
  let h: ApiHarness;
  let companyId: string;
  let admin: { secret: string };
  let reader: { secret: string };
  let sender: { secret: string };
  let owner: Browser;
  let adminMember: Browser;
  let member: Browser;
  let other: { companyId: string; secret: string };

  const json = (secret: string, method: string, body?: unknown, extra: Record<string, string> = {}): RequestInit => ({
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...extra },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const path = (email: string, query = "") => `/mail/v1/suppressions/${encodeURIComponent(email)}${query}`;
  const grpc = () => createClient(SuppressionsService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
  const auth = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
    companyId = await newCompany(h, "Suppressing Co");
    admin = await h.newKey(companyId, ["mail.admin", "mail.events.read"], "admin key");
    reader = await h.newKey(companyId, ["mail.events.read"], "reader key");
    sender = await h.newKey(companyId, ["mail.transactional.send"], "sending key");
    owner = await signedIn(h, companyId, "owner@suppressing.example", "owner");
    adminMember = await signedIn(h, companyId, "admin@suppressing.example", "admin");
    member = await signedIn(h, companyId, "member@suppressing.example", "member");
    const created = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Other Co");
    other = { companyId: created.companyId, secret: created.secret };
  });
  afterAll(async () => h?.close());

  it("lists the send path's suppressions with the message behind each, newest first, over REST, gRPC and the session door", async () => {
    const bounced = randomUUID();
    const complained = randomUUID();
    await h.app.suppressions.suppress({ companyId, email: "Bounced@List.example", reason: "bounce", messageId: bounced });
    await h.app.suppressions.suppress({ companyId, email: "angry@list.example", reason: "complaint", messageId: complained });

    const rest = await h.fetch("/mail/v1/suppressions?q=list.example", bearer(reader.secret));
    expect(rest.status).toBe(200);
    const page = (await rest.json()) as { items: SuppressionJson[]; nextCursor: string | null };
    expect(page).toEqual({
      items: [
        { email: "angry@list.example", reason: "complaint", messageId: complained, createdAt: expect.stringMatching(/Z$/) },
        { email: "bounced@list.example", reason: "bounce", messageId: bounced, createdAt: expect.stringMatching(/Z$/) },
      ],
      nextCursor: null,
    });

    const byGrpc = await grpc().listSuppressions({ q: "list.example", reason: SuppressionReason.BOUNCE }, auth(reader.secret));
    expect(byGrpc.items.map((s) => [s.email, s.reason, s.messageId])).toEqual([["bounced@list.example", SuppressionReason.BOUNCE, bounced]]);

    const bySession = await member.call("mail.v1.SuppressionsService", "ListSuppressions", { q: "list.example", reason: "SUPPRESSION_REASON_COMPLAINT" });
    expect(bySession.status).toBe(200);
    expect((bySession.body.items as SuppressionJson[]).map((s) => s.email)).toEqual(["angry@list.example"]);

    // One address, any spelling.
    const one = await h.fetch(path("BOUNCED@list.example"), bearer(reader.secret));
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ email: "bounced@list.example", reason: "bounce", messageId: bounced });
    const sessionGet = await member.call("mail.v1.SuppressionsService", "GetSuppression", { email: "angry@list.example" });
    expect((sessionGet.body.suppression as SuppressionJson).reason).toBe("SUPPRESSION_REASON_COMPLAINT");
  });

  it("filters by time and pages with a cursor bound to its filters", async () => {
    for (const n of [1, 2, 3]) await h.app.suppressions.suppress({ companyId, email: `paged-${n}@time.example`, reason: "bounce" });
    await h.db.query(`update suppression set created_at = ('2030-05-0' || substring(email from 7 for 1) || 'T00:00:00Z')::timestamptz where company_id = $1 and email like 'paged-%'`, [
      companyId,
    ]);
    const window = await h.fetch("/mail/v1/suppressions?since=2030-05-02T00:00:00Z&until=2030-05-03T00:00:00Z", bearer(reader.secret));
    expect(((await window.json()) as { items: SuppressionJson[] }).items.map((s) => s.email)).toEqual(["paged-2@time.example"]);

    const seen: string[] = [];
    let cursor = "";
    for (;;) {
      const response = await h.fetch(`/mail/v1/suppressions?q=time.example&limit=2${cursor ? `&cursor=${cursor}` : ""}`, bearer(reader.secret));
      const body = (await response.json()) as { items: SuppressionJson[]; nextCursor: string | null };
      seen.push(...body.items.map((s) => s.email));
      if (!body.nextCursor) break;
      cursor = body.nextCursor;
      // The cursor is for these filters only.
      const elsewhere = await h.fetch(`/mail/v1/suppressions?q=other&limit=2&cursor=${cursor}`, bearer(reader.secret));
      expect(elsewhere.status).toBe(400);
      expect(((await elsewhere.json()) as ErrorJson).error.message).toMatch(/^cursor: /);
    }
    expect(seen).toEqual(["paged-3@time.example", "paged-2@time.example", "paged-1@time.example"]);
  });

  it("a Mail administrator adds a manual suppression (201); adding it again answers the same entry; a replayed Idempotency-Key answers the first answer", async () => {
    const first = await h.fetch("/mail/v1/suppressions", json(admin.secret, "POST", { email: "Hand@Added.example" }, { "idempotency-key": "add-hand-1" }));
    expect(first.status).toBe(201);
    const added = (await first.json()) as { suppression: SuppressionJson; created: boolean };
    expect(added).toEqual({ created: true, suppression: { email: "hand@added.example", reason: "manual", messageId: null, createdAt: expect.any(String) } });

    const replay = await h.fetch("/mail/v1/suppressions", json(admin.secret, "POST", { email: "Hand@Added.example" }, { "idempotency-key": "add-hand-1" }));
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(added);

    const again = await h.fetch("/mail/v1/suppressions", json(admin.secret, "POST", { email: "hand@added.example" }));
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual({ ...added, created: false });

    // The session door and gRPC add the same way.
    const bySession = await adminMember.call("mail.v1.SuppressionsService", "AddSuppression", { email: "session@added.example" });
    expect(bySession.status).toBe(200);
    expect(bySession.body.created).toBe(true);
    const byGrpc = await grpc().addSuppression({ email: "grpc@added.example" }, auth(admin.secret));
    expect(byGrpc.suppression?.reason).toBe(SuppressionReason.MANUAL);

    // Each addition once in the audit log, with who made it.
    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "suppression.added" });
    const rows = (audit.body.items as Array<{ actor: string; targetId: string }>).map((row) => [row.targetId, row.actor]);
    expect(rows).toEqual([
      ["grpc@added.example", expect.stringMatching(/^tml_/)],
      ["session@added.example", "admin@suppressing.example"],
      ["hand@added.example", expect.stringMatching(/^tml_/)],
    ]);
  });

  it("removes an address with a written reason, audited; the list no longer has it", async () => {
    await h.app.suppressions.suppress({ companyId, email: "fixed@remove.example", reason: "bounce", messageId: randomUUID() });
    const removed = await h.fetch(path("Fixed@Remove.example", "?reason=mailbox%20exists%20again"), json(admin.secret, "DELETE"));
    expect(removed.status).toBe(200);
    expect(await removed.json()).toMatchObject({ suppression: { email: "fixed@remove.example", reason: "bounce" } });
    expect((await h.fetch(path("fixed@remove.example"), bearer(reader.secret))).status).toBe(404);
    const twice = await h.fetch(path("fixed@remove.example", "?reason=again"), json(admin.secret, "DELETE"));
    expect(twice.status).toBe(404);
    expect(((await twice.json()) as ErrorJson).error.code).toBe("NOT_FOUND");

    await h.app.suppressions.suppress({ companyId, email: "session@remove.example", reason: "manual" });
    const bySession = await adminMember.call("mail.v1.SuppressionsService", "RemoveSuppression", { email: "session@remove.example", reason: "added by mistake" });
    expect(bySession.status).toBe(200);

    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "suppression.removed" });
    const rows = (audit.body.items as Array<{ actor: string; targetId: string; details: string }>).map((row) => ({
      target: row.targetId,
      actor: row.actor,
      details: JSON.parse(row.details) as Record<string, unknown>,
    }));
    expect(rows).toEqual([
      { target: "session@remove.example", actor: "admin@suppressing.example", details: { email: "session@remove.example", suppressedFor: "manual", reason: "added by mistake" } },
      { target: "fixed@remove.example", actor: expect.stringMatching(/^tml_/), details: { email: "fixed@remove.example", suppressedFor: "bounce", reason: "mailbox exists again" } },
    ]);
  });

  it("a complaint is removed by an owner or an operator only: an admin's session and an API key get 403 FORBIDDEN saying so", async () => {
    for (const email of ["c1@complaint.example", "c2@complaint.example", "c3@complaint.example"]) {
      await h.app.suppressions.suppress({ companyId, email, reason: "complaint", messageId: randomUUID() });
    }
    const byAdmin = await adminMember.call("mail.v1.SuppressionsService", "RemoveSuppression", { email: "c1@complaint.example", reason: "they asked" });
    expect(byAdmin.status).toBe(403);
    expect(reasonOf(byAdmin)).toBe("FORBIDDEN");
    expect(String(byAdmin.body.message)).toMatch(/Only an owner may remove a complaint/);
    const byKey = await h.fetch(path("c1@complaint.example", "?reason=they%20asked"), json(admin.secret, "DELETE"));
    expect(byKey.status).toBe(403);
    expect(((await byKey.json()) as ErrorJson).error).toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/owner/) });
    const byGrpcKey = await grpc()
      .removeSuppression({ email: "c1@complaint.example", reason: "they asked" }, auth(admin.secret))
      .catch((e: unknown) => e);
    expect((byGrpcKey as ConnectError).code).toBe(Code.PermissionDenied);
    expect((await h.fetch(path("c1@complaint.example"), bearer(reader.secret))).status).toBe(200);

    const byOwner = await owner.call("mail.v1.SuppressionsService", "RemoveSuppression", { email: "c1@complaint.example", reason: "they asked to hear from us again" });
    expect(byOwner.status).toBe(200);
    const byOperator = await h.forCompany(SuppressionsService, companyId).removeSuppression({ email: "c2@complaint.example", reason: "support ticket 77" });
    expect(byOperator.suppression?.reason).toBe(SuppressionReason.COMPLAINT);
    // A complaint is not a reason to refuse an admin anything else: they still read it.
    expect((await adminMember.call("mail.v1.SuppressionsService", "GetSuppression", { email: "c3@complaint.example" })).status).toBe(200);
  });

  it("a member reads but changes nothing; a key without the scopes is refused (403)", async () => {
    await h.app.suppressions.suppress({ companyId, email: "kept@roles.example", reason: "manual" });
    for (const [method, body] of [
      ["AddSuppression", { email: "x@roles.example" }],
      ["RemoveSuppression", { email: "kept@roles.example", reason: "no" }],
    ] as const) {
      const answer = await member.call("mail.v1.SuppressionsService", method, body);
      expect(answer.status, method).toBe(403);
      expect(reasonOf(answer)).toBe("FORBIDDEN");
    }
    expect((await h.fetch("/mail/v1/suppressions", json(reader.secret, "POST", { email: "x@roles.example" }))).status).toBe(403);
    expect((await h.fetch(path("kept@roles.example", "?reason=no"), json(reader.secret, "DELETE"))).status).toBe(403);
    expect((await h.fetch("/mail/v1/suppressions", bearer(sender.secret))).status).toBe(403);
    expect((await h.fetch(path("kept@roles.example"), bearer(reader.secret))).status).toBe(200);
  });

  it("another company's addresses answer 404 over REST, gRPC and the session door, and stay listed", async () => {
    await h.app.suppressions.suppress({ companyId: other.companyId, email: "theirs@other.example", reason: "bounce" });
    expect((await h.fetch(path("theirs@other.example"), bearer(reader.secret))).status).toBe(404);
    const rest = await h.fetch(path("theirs@other.example", "?reason=mine%20now"), json(admin.secret, "DELETE"));
    expect(rest.status).toBe(404);
    expect(((await rest.json()) as ErrorJson).error.code).toBe("NOT_FOUND");
    const error = await grpc()
      .getSuppression({ email: "theirs@other.example" }, auth(admin.secret))
      .catch((e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.NotFound);
    const session = await owner.call("mail.v1.SuppressionsService", "RemoveSuppression", { email: "theirs@other.example", reason: "mine now" });
    expect(session.status).toBe(404);
    expect(reasonOf(session)).toBe("NOT_FOUND");
    const list = (await (await h.fetch("/mail/v1/suppressions?q=other.example", bearer(reader.secret))).json()) as { items: unknown[] };
    expect(list.items).toEqual([]);
    // Still theirs, and their own cursor is refused here.
    const theirs = (await (await h.fetch("/mail/v1/suppressions?limit=1", bearer(other.secret))).json()) as { items: SuppressionJson[] };
    expect(theirs.items.map((s) => s.email)).toEqual(["theirs@other.example"]);
    await h.app.suppressions.suppress({ companyId: other.companyId, email: "second@other.example", reason: "bounce" });
    const paged = (await (await h.fetch("/mail/v1/suppressions?limit=1", bearer(other.secret))).json()) as { nextCursor: string };
    expect((await h.fetch(`/mail/v1/suppressions?limit=1&cursor=${paged.nextCursor}`, bearer(reader.secret))).status).toBe(400);
  });

  it("bad input answers 400 VALIDATION_ERROR naming the field, on every door", async () => {
    const cases: Array<[string, RequestInit, string]> = [
      ["/mail/v1/suppressions", json(admin.secret, "POST", { email: "not-an-address" }), "email"],
      ["/mail/v1/suppressions", json(admin.secret, "POST", {}), "email"],
      ["/mail/v1/suppressions", json(admin.secret, "POST", { email: "a@b.example", reason: "manual" }), "reason"],
      [path("kept@roles.example"), json(admin.secret, "DELETE"), "reason"],
      [path("kept@roles.example", `?reason=${"x".repeat(501)}`), json(admin.secret, "DELETE"), "reason"],
      [path("kept@roles.example", "?reason=%20%20"), json(admin.secret, "DELETE"), "reason"],
      ["/mail/v1/suppressions?limit=0", bearer(reader.secret), "limit"],
      ["/mail/v1/suppressions?reason=spam", bearer(reader.secret), "reason"],
      ["/mail/v1/suppressions?since=yesterday", bearer(reader.secret), "since"],
      ["/mail/v1/suppressions?since=2030-01-02T00:00:00Z&until=2030-01-01T00:00:00Z", bearer(reader.secret), "until"],
      [`/mail/v1/suppressions?q=${"q".repeat(255)}`, bearer(reader.secret), "q"],
      ["/mail/v1/suppressions?cursor=forged", bearer(reader.secret), "cursor"],
    ];
    for (const [url, init, field] of cases) {
      const response = await h.fetch(url, init);
      const body = (await response.json()) as ErrorJson;
      expect(response.status, `${init.method ?? "GET"} ${url}`).toBe(400);
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.message, url).toMatch(new RegExp(`\\b${field}\\b`));
    }
    const session = await adminMember.call("mail.v1.SuppressionsService", "AddSuppression", { email: "nope" });
    expect(session.status).toBe(400);
    expect(String(session.body.message)).toMatch(/^email: /);
    const byGrpc = await grpc()
      .listSuppressions({ since: timestampFromDate(new Date("2030-01-02T00:00:00Z")), until: timestampFromDate(new Date("2030-01-01T00:00:00Z")) }, auth(reader.secret))
      .catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.InvalidArgument);
    expect((byGrpc as ConnectError).rawMessage).toMatch(/^until: /);
    // A reason number the contract does not know is refused, not read as "any reason".
    const unknown = await grpc()
      .listSuppressions({ reason: 99 as SuppressionReason }, auth(reader.secret))
      .catch((e: unknown) => e);
    expect((unknown as ConnectError).code).toBe(Code.InvalidArgument);
    expect((unknown as ConnectError).rawMessage).toMatch(/^reason: /);
  });
});
