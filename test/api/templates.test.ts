import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";
import { type Browser, newCompany, reasonOf, signedIn } from "./members-support.ts";

/**
 * The company's templates over every door: REST and gRPC with API keys,
 * the session door (Connect, as the screen calls it) for each role, and an
 * operator acting for the company. Members read and preview; owners, admins
 * and keys with mail.admin change. Every change keeps a version (the last
 * 20) and an audit row; another company's templates are 404.
 */

interface TemplateJson {
  id: string;
  companyId: string;
  name: string;
  subject: string;
  html: string;
  text: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

interface VersionJson {
  version: number;
  name: string;
  subject: string;
  html: string;
  text: string | null;
  createdBy: string;
  createdAt: string;
  restoredFrom: number | null;
}

interface ErrorJson {
  error: { code: string; message: string };
}

describe("the company's templates (TemplatesService, /mail/v1/templates)", () => {
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
  const grpc = () => createClient(TemplatesService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
  const auth = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });
  const put = async (secret: string, name: string, body: Record<string, unknown>): Promise<TemplateJson> => {
    const response = await h.fetch(`/mail/v1/templates/${encodeURIComponent(name)}`, json(secret, "PUT", body));
    expect(response.status, JSON.stringify(body)).toBe(200);
    return ((await response.json()) as { template: TemplateJson }).template;
  };
  const versions = async (secret: string, templateId: string): Promise<VersionJson[]> => {
    const response = await h.fetch(`/mail/v1/templates/${templateId}/versions`, bearer(secret));
    expect(response.status).toBe(200);
    return ((await response.json()) as { versions: VersionJson[] }).versions;
  };

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
    companyId = await newCompany(h, "Templating Co");
    admin = await h.newKey(companyId, ["mail.admin", "mail.events.read"], "admin key");
    reader = await h.newKey(companyId, ["mail.events.read"], "reader key");
    sender = await h.newKey(companyId, ["mail.transactional.send"], "sending key");
    owner = await signedIn(h, companyId, "owner@templating.example", "owner");
    adminMember = await signedIn(h, companyId, "admin@templating.example", "admin");
    member = await signedIn(h, companyId, "member@templating.example", "member");
    const created = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Other Co");
    other = { companyId: created.companyId, secret: created.secret };
  });
  afterAll(async () => h?.close());

  it("creates, reads (by id or name) and lists over REST, gRPC and the session door; every member reads", async () => {
    const created = await put(admin.secret, "welcome", { subject: "Hi {{ name }}", html: "<p>Hello {{ name | default:there }}</p>", text: "Hello {{ name }}" });
    expect(created).toMatchObject({ name: "welcome", companyId, version: 1, text: "Hello {{ name }}" });

    const byId = await h.fetch(`/mail/v1/templates/${created.id}`, bearer(reader.secret));
    expect(byId.status).toBe(200);
    expect(await byId.json()).toEqual(created);
    const byName = await h.fetch("/mail/v1/templates/welcome", bearer(reader.secret));
    expect(((await byName.json()) as TemplateJson).id).toBe(created.id);

    const byGrpc = await grpc().getTemplate({ name: created.id }, auth(reader.secret));
    expect(byGrpc.template?.subject).toBe("Hi {{ name }}");
    const listed = await grpc().listTemplates({}, auth(reader.secret));
    expect(listed.templates.map((t) => t.name)).toContain("welcome");

    const bySession = await member.call("mail.v1.TemplatesService", "GetTemplate", { name: created.id });
    expect(bySession.status).toBe(200);
    expect((bySession.body.template as TemplateJson).html).toBe("<p>Hello {{ name | default:there }}</p>");
    const listBySession = await member.call("mail.v1.TemplatesService", "ListTemplates", {});
    expect((listBySession.body.templates as TemplateJson[]).map((t) => t.name)).toContain("welcome");

    // The first version is the created content, by whom.
    expect(await versions(reader.secret, created.id)).toEqual([
      {
        version: 1,
        name: "welcome",
        subject: "Hi {{ name }}",
        html: "<p>Hello {{ name | default:there }}</p>",
        text: "Hello {{ name }}",
        createdBy: expect.stringMatching(/^tml_/),
        createdAt: expect.stringMatching(/Z$/),
        restoredFrom: null,
      },
    ]);
  });

  it("21 changes keep the last 20 versions; restoring one makes a new version with its content; a pruned one answers 404", async () => {
    const first = await put(admin.secret, "receipt", { subject: "Receipt 0", html: "<p>v0</p>" });
    for (let n = 1; n <= 21; n += 1) {
      const changed = await put(admin.secret, "receipt", { subject: `Receipt ${n}`, html: `<p>v${n}</p>` });
      expect(changed).toMatchObject({ id: first.id, version: n + 1 });
    }
    const kept = await versions(reader.secret, first.id);
    expect(kept).toHaveLength(20);
    expect(kept.map((v) => v.version)).toEqual(Array.from({ length: 20 }, (_, i) => 22 - i));
    expect(kept[0]).toMatchObject({ version: 22, subject: "Receipt 21", html: "<p>v21</p>" });
    expect(kept[19]).toMatchObject({ version: 3, subject: "Receipt 2" });

    // Restore version 5 (content "Receipt 4") by the session door: a new version 23.
    const restored = await adminMember.call("mail.v1.TemplatesService", "RestoreTemplateVersion", { templateId: first.id, version: 5 });
    expect(restored.status).toBe(200);
    expect(restored.body.template).toMatchObject({ id: first.id, version: 23, subject: "Receipt 4", html: "<p>v4</p>" });
    const after = await versions(reader.secret, first.id);
    expect(after).toHaveLength(20);
    expect(after[0]).toMatchObject({ version: 23, subject: "Receipt 4", restoredFrom: 5, createdBy: "admin@templating.example" });
    expect(after.at(-1)?.version).toBe(4);
    const current = (await (await h.fetch(`/mail/v1/templates/${first.id}`, bearer(reader.secret))).json()) as TemplateJson;
    expect(current).toMatchObject({ subject: "Receipt 4", version: 23 });

    // Version 2 is pruned: 404; the template is unchanged.
    const pruned = await h.fetch(`/mail/v1/templates/${first.id}/restore`, json(admin.secret, "POST", { version: 2 }));
    expect(pruned.status).toBe(404);
    expect(((await pruned.json()) as ErrorJson).error.code).toBe("NOT_FOUND");
    const byGrpc = await grpc()
      .restoreTemplateVersion({ templateId: first.id, version: 99 }, auth(admin.secret))
      .catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.NotFound);

    // Every change once in the audit log, with its version.
    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "template.restored" });
    const rows = (audit.body.items as Array<{ actor: string; targetId: string; details: string }>).map((row) => [
      row.targetId,
      row.actor,
      JSON.parse(row.details) as Record<string, unknown>,
    ]);
    expect(rows).toEqual([[first.id, "admin@templating.example", { name: "receipt", version: 23, restoredFrom: 5 }]]);
    const puts = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "template.put", limit: 100 });
    expect((puts.body.items as Array<{ targetId: string }>).filter((row) => row.targetId === first.id)).toHaveLength(22);
  });

  it("a replayed restore (same Idempotency-Key) answers the first answer and makes no second version", async () => {
    const t = await put(admin.secret, "replayed", { subject: "One", html: "<p>1</p>" });
    await put(admin.secret, "replayed", { subject: "Two", html: "<p>2</p>" });
    const init = json(admin.secret, "POST", { version: 1 }, { "idempotency-key": "restore-once-1" });
    const first = await h.fetch(`/mail/v1/templates/${t.id}/restore`, init);
    expect(first.status).toBe(200);
    const answer = (await first.json()) as { template: TemplateJson };
    expect(answer.template).toMatchObject({ version: 3, subject: "One" });
    const replay = await h.fetch(`/mail/v1/templates/${t.id}/restore`, init);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(answer);
    expect((await versions(reader.secret, t.id)).map((v) => v.version)).toEqual([3, 2, 1]);
    // The same key with another version is a conflict, not a restore.
    const conflict = await h.fetch(`/mail/v1/templates/${t.id}/restore`, json(admin.secret, "POST", { version: 2 }, { "idempotency-key": "restore-once-1" }));
    expect(conflict.status).toBe(409);
  });

  it("previews a stored template or unsaved content through the send's renderer and sanitiser, answering the variables it uses", async () => {
    const t = await put(admin.secret, "preview-me", {
      subject: "Order {{ order }} for {{ name }}",
      html: '<p onclick="x()">Hi {{ name }}</p><script>alert(1)</script><a href="javascript:alert(1)">{{ link | default:"here" }}</a>',
      text: "Hi {{ name }}, order {{ order }}",
    });
    const stored = await h.fetch("/mail/v1/templates/preview", json(reader.secret, "POST", { templateId: t.id, variables: { name: "<b>Ann</b>", order: 1001 } }));
    expect(stored.status).toBe(200);
    expect(await stored.json()).toEqual({
      subject: "Order 1001 for <b>Ann</b>",
      html: "<p>Hi &lt;b&gt;Ann&lt;/b&gt;</p><a>here</a>",
      text: "Hi <b>Ann</b>, order 1001",
      variables: ["order", "name", "link"],
    });

    // A draft the editor has not saved, by a member's session: nothing is stored.
    const draft = await member.call("mail.v1.TemplatesService", "PreviewTemplate", { html: "<h1>{{ title }}</h1><style>p{}</style>", variables: { title: "Sale" } });
    expect(draft.status).toBe(200);
    // (Connect JSON leaves out the empty subject.)
    expect(draft.body).toEqual({ html: "<h1>Sale</h1>", variables: ["title"] });
    const byGrpc = await grpc().previewTemplate({ subject: "{{ a }}", html: "<p>{{ b }}</p>", text: "{{ c }}" }, auth(reader.secret));
    expect([byGrpc.subject, byGrpc.html, byGrpc.text, byGrpc.variables]).toEqual(["", "<p></p>", "", ["a", "b", "c"]]);
    const listed = (await (await h.fetch("/mail/v1/templates", bearer(reader.secret))).json()) as { templates: TemplateJson[] };
    expect(listed.templates.map((x) => x.name)).not.toContain("");
  });

  it("deletes a template with its versions, audited; it is gone on every door", async () => {
    const t = await put(admin.secret, "short-lived", { subject: "s", html: "<p>h</p>" });
    const removed = await h.fetch(`/mail/v1/templates/${t.id}`, json(admin.secret, "DELETE"));
    expect(removed.status).toBe(200);
    for (const path of [`/mail/v1/templates/${t.id}`, `/mail/v1/templates/${t.id}/versions`, "/mail/v1/templates/short-lived"]) {
      expect((await h.fetch(path, bearer(reader.secret))).status, path).toBe(404);
    }
    expect((await h.fetch(`/mail/v1/templates/${t.id}`, json(admin.secret, "DELETE"))).status).toBe(404);
    // By name, by the session door.
    const named = await put(admin.secret, "by-name", { subject: "s", html: "<p>h</p>" });
    const bySession = await owner.call("mail.v1.TemplatesService", "DeleteTemplate", { name: "by-name" });
    expect(bySession.status).toBe(200);
    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "template.deleted" });
    expect((audit.body.items as Array<{ actor: string; targetId: string }>).map((row) => [row.targetId, row.actor])).toEqual([
      [named.id, "owner@templating.example"],
      [t.id, expect.stringMatching(/^tml_/)],
    ]);
  });

  it("a member reads and previews but changes nothing; keys without the scopes are refused (403)", async () => {
    const t = await put(admin.secret, "guarded", { subject: "s", html: "<p>h</p>" });
    for (const [method, body] of [
      ["PutTemplate", { name: "guarded", subject: "taken", html: "<p>x</p>" }],
      ["DeleteTemplate", { name: t.id }],
      ["RestoreTemplateVersion", { templateId: t.id, version: 1 }],
      ["SendTestTemplate", { templateId: t.id }],
    ] as const) {
      const answer = await member.call("mail.v1.TemplatesService", method, body);
      expect(answer.status, method).toBe(403);
      expect(reasonOf(answer)).toBe("FORBIDDEN");
    }
    expect((await h.fetch("/mail/v1/templates/guarded", json(reader.secret, "PUT", { subject: "x", html: "y" }))).status).toBe(403);
    expect((await h.fetch(`/mail/v1/templates/${t.id}`, json(reader.secret, "DELETE"))).status).toBe(403);
    expect((await h.fetch("/mail/v1/templates", bearer(sender.secret))).status).toBe(403);
    expect((await h.fetch("/mail/v1/templates/preview", json(sender.secret, "POST", { html: "x" }))).status).toBe(403);
    expect((await h.fetch(`/mail/v1/templates/${t.id}`, bearer(reader.secret))).status).toBe(200);
    expect(await versions(reader.secret, t.id)).toHaveLength(1);
  });

  it("a test send needs a member's own address: an API key and an operator get 403 FORBIDDEN saying why", async () => {
    const t = await put(admin.secret, "test-me", { subject: "s", html: "<p>h</p>" });
    const byKey = await h.fetch(`/mail/v1/templates/${t.id}/send-test`, json(admin.secret, "POST", {}));
    expect(byKey.status).toBe(403);
    expect(((await byKey.json()) as ErrorJson).error).toEqual({
      code: "FORBIDDEN",
      message: expect.stringMatching(/signed-in member's own address.*API key.*POST \/mail\/v1\/send/),
    });
    const byGrpc = await grpc()
      .sendTestTemplate({ templateId: t.id }, auth(admin.secret))
      .catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.PermissionDenied);
    const byOperator = await h
      .forCompany(TemplatesService, companyId)
      .sendTestTemplate({ templateId: t.id })
      .catch((e: unknown) => e);
    expect((byOperator as ConnectError).code).toBe(Code.PermissionDenied);
    const sent = await h.db.query(`select 1 from message where company_id = $1`, [companyId]);
    expect(sent.rows).toHaveLength(0);
  });

  it("another company's templates answer 404 on every route, over REST, gRPC and the session door, and stay as they were", async () => {
    const theirs = await put(other.secret, "theirs", { subject: "Theirs", html: "<p>theirs</p>" });
    const rest: Array<[string, RequestInit]> = [
      [`/mail/v1/templates/${theirs.id}`, bearer(admin.secret)],
      [`/mail/v1/templates/${theirs.id}/versions`, bearer(admin.secret)],
      [`/mail/v1/templates/${theirs.id}`, json(admin.secret, "DELETE")],
      [`/mail/v1/templates/${theirs.id}/restore`, json(admin.secret, "POST", { version: 1 })],
      ["/mail/v1/templates/preview", json(admin.secret, "POST", { templateId: theirs.id })],
      ["/mail/v1/templates/theirs", bearer(admin.secret)],
    ];
    for (const [path, init] of rest) {
      const response = await h.fetch(path, init);
      expect(response.status, `${init.method ?? "GET"} ${path}`).toBe(404);
      expect(((await response.json()) as ErrorJson).error.code).toBe("NOT_FOUND");
    }
    for (const call of [
      () => grpc().getTemplate({ name: theirs.id }, auth(admin.secret)),
      () => grpc().deleteTemplate({ name: theirs.id }, auth(admin.secret)),
      () => grpc().listTemplateVersions({ templateId: theirs.id }, auth(admin.secret)),
      () => grpc().restoreTemplateVersion({ templateId: theirs.id, version: 1 }, auth(admin.secret)),
      () => grpc().previewTemplate({ templateId: theirs.id }, auth(admin.secret)),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect((error as ConnectError).code).toBe(Code.NotFound);
    }
    for (const [method, body] of [
      ["GetTemplate", { name: theirs.id }],
      ["DeleteTemplate", { name: theirs.id }],
      ["ListTemplateVersions", { templateId: theirs.id }],
      ["RestoreTemplateVersion", { templateId: theirs.id, version: 1 }],
      ["PreviewTemplate", { templateId: theirs.id }],
      ["SendTestTemplate", { templateId: theirs.id }],
    ] as const) {
      const answer = await owner.call("mail.v1.TemplatesService", method, body);
      expect(answer.status, method).toBe(404);
      expect(reasonOf(answer)).toBe("NOT_FOUND");
    }
    const listed = (await (await h.fetch("/mail/v1/templates", bearer(admin.secret))).json()) as { templates: TemplateJson[] };
    expect(listed.templates.map((t) => t.id)).not.toContain(theirs.id);
    const still = (await (await h.fetch(`/mail/v1/templates/${theirs.id}`, bearer(other.secret))).json()) as TemplateJson;
    expect(still).toMatchObject({ subject: "Theirs", version: 1 });
  });

  it("bad input answers 400 VALIDATION_ERROR naming the field, on every door", async () => {
    const t = await put(admin.secret, "valid", { subject: "s", html: "<p>h</p>" });
    const cases: Array<[string, RequestInit, string]> = [
      ["/mail/v1/templates/bad", json(admin.secret, "PUT", { subject: "", html: "<p>x</p>" }), "subject"],
      ["/mail/v1/templates/bad", json(admin.secret, "PUT", { subject: "s" }), "html"],
      ["/mail/v1/templates/bad", json(admin.secret, "PUT", { subject: "a\nb", html: "x" }), "subject"],
      ["/mail/v1/templates/bad", json(admin.secret, "PUT", { subject: "s", html: "x", colour: "red" }), "colour"],
      [`/mail/v1/templates/${"n".repeat(201)}`, json(admin.secret, "PUT", { subject: "s", html: "x" }), "name"],
      [`/mail/v1/templates/${t.id}/restore`, json(admin.secret, "POST", { version: 0 }), "version"],
      [`/mail/v1/templates/${t.id}/restore`, json(admin.secret, "POST", { version: "two" }), "version"],
      ["/mail/v1/templates/preview", json(reader.secret, "POST", {}), "html"],
      ["/mail/v1/templates/preview", json(reader.secret, "POST", { html: "x", variables: { deep: { a: 1 } } }), "variables.deep"],
      ["/mail/v1/templates/preview", json(reader.secret, "POST", { html: "x", variables: { long: "v".repeat(10_001) } }), "variables.long"],
      ["/mail/v1/templates/preview", json(reader.secret, "POST", { html: "x".repeat(400_001) }), "html"],
      ["/mail/v1/templates/preview", json(reader.secret, "POST", { templateId: "t".repeat(201) }), "templateId"],
    ];
    for (const [url, init, field] of cases) {
      const response = await h.fetch(url, init);
      const body = (await response.json()) as ErrorJson;
      expect(response.status, `${init.method ?? "GET"} ${url.slice(0, 80)}`).toBe(400);
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.message, url.slice(0, 80)).toMatch(new RegExp(`\\b${field.replace(".", "\\.")}\\b`));
    }
    const session = await adminMember.call("mail.v1.TemplatesService", "PutTemplate", { name: "bad", subject: "s", html: "  " });
    expect(session.status).toBe(400);
    expect(String(session.body.message)).toMatch(/^html: /);
    const byGrpc = await grpc()
      .restoreTemplateVersion({ templateId: t.id, version: 0 }, auth(admin.secret))
      .catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.InvalidArgument);
    expect((byGrpc as ConnectError).rawMessage).toMatch(/^version: /);
    // Nothing bad was stored.
    expect((await h.fetch("/mail/v1/templates/bad", bearer(reader.secret))).status).toBe(404);
  });
});
