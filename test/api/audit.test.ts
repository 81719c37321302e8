import { createClient } from "@connectrpc/connect";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../src/gen/mail/v1/audit_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { type Browser, newCompany, reasonOf, signedIn, tokenOf } from "./members-support.ts";

type EventJson = {
  id: string;
  actorKind: string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  requestId: string;
  clientIp: string;
  details: string;
  occurredAt: string;
};

describe("the audit log", () => {
  let h: ApiHarness;
  let companyId: string;
  let owner: Browser;
  const secrets: string[] = [];

  beforeAll(async () => {
    // One public-looking webhook host (documentation address), resolved without DNS.
    const resolver = {
      resolve: async (hostname: string) => {
        if (hostname !== "hooks.audit.example") throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        return [{ address: "93.184.215.14", family: 4 as const }];
      },
    };
    h = await startApiHarness({ trustProxy: true }, { webhookDelivery: { resolver } });
    companyId = await newCompany(h, "Audit Co");
    owner = await signedIn(h, companyId, "owner@audit.example", "owner");
  });
  afterAll(async () => h?.close());

  const events = async (body: Record<string, unknown> = {}): Promise<{ items: EventJson[]; nextCursor?: string }> => {
    const answer = await owner.call("mail.v1.AuditService", "ListAuditEvents", body);
    expect(answer.status).toBe(200);
    const page = answer.body as { items?: EventJson[]; nextCursor?: string };
    return { items: page.items ?? [], ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  };

  it("records each administrative change with actor, action, target, request id and client address, never a secret", async () => {
    const created = await owner.call("mail.v1.ApiKeysService", "CreateApiKey", { name: "audited", scopes: ["mail.events.read"] });
    secrets.push(String(created.body.secret));
    const keyId = (created.body.key as { id: string }).id;
    const requestId = created.headers.get("x-request-id");
    const rotated = await owner.call("mail.v1.ApiKeysService", "RotateApiKey", { id: keyId, graceHours: 0 });
    secrets.push(String(rotated.body.secret));
    await owner.call("mail.v1.ApiKeysService", "RevokeApiKey", { id: (rotated.body.key as { id: string }).id });
    const invited = await owner.call("mail.v1.MembersService", "InviteMember", { email: "temp@audit.example", role: "MEMBER_ROLE_ADMIN" });
    secrets.push(tokenOf(String(invited.body.signInUrl)));
    const memberId = (invited.body.member as { id: string }).id;
    await owner.call("mail.v1.MembersService", "UpdateMember", { id: memberId, role: "MEMBER_ROLE_MEMBER" });
    await owner.call("mail.v1.MembersService", "EndMemberSessions", { id: memberId });
    await owner.call("mail.v1.MembersService", "RemoveMember", { id: memberId });

    const { items } = await events();
    expect(items.map((e) => e.action)).toEqual([
      "member.removed",
      "member.sessions_ended",
      "member.updated",
      "member.invited",
      "api_key.revoked",
      "api_key.rotated",
      "api_key.created",
      // The owner, invited by the operator.
      "member.invited",
    ]);
    const create = items.find((e) => e.action === "api_key.created");
    expect(create).toMatchObject({
      actorKind: "AUDIT_ACTOR_KIND_MEMBER",
      actor: "owner@audit.example",
      targetType: "api_key",
      targetId: keyId,
      requestId,
      clientIp: owner.address,
    });
    expect(JSON.parse(create?.details ?? "{}")).toMatchObject({ name: "audited", scopes: ["mail.events.read"] });
    expect(items.at(-1)).toMatchObject({ actorKind: "AUDIT_ACTOR_KIND_OPERATOR", actor: "operator" });
    expect(JSON.parse(items.at(-1)?.details ?? "{}")).toEqual({ email: "owner@audit.example", role: "owner", linkShown: true });

    const table = await h.db.query<{ t: string }>(`select coalesce(string_agg(row_to_json(a)::text, ' '), '') as t from audit_event a`);
    for (const secret of secrets) expect(table.rows[0]?.t).not.toContain(secret);
  });

  it("records contact list changes too, from a session and from an operator", async () => {
    const created = await owner.call("mail.v1.ListsService", "CreateContactList", { name: "Audited list" });
    const listId = (created.body.list as { id: string }).id;
    await owner.call("mail.v1.ListsService", "RenameContactList", { id: listId, name: "Renamed list" });
    await h.forCompany(ListsService, companyId).deleteContactList({ id: listId });
    const { items } = await events({ limit: 3 });
    expect(items.map((e) => [e.action, e.actor, e.targetId])).toEqual([
      ["contact_list.deleted", "operator", listId],
      ["contact_list.renamed", "owner@audit.example", listId],
      ["contact_list.created", "owner@audit.example", listId],
    ]);
    // A refused rename (the name is taken) writes nothing.
    await owner.call("mail.v1.ListsService", "CreateContactList", { name: "One" });
    const two = await owner.call("mail.v1.ListsService", "CreateContactList", { name: "Two" });
    const before = (await events({ limit: 100 })).items.length;
    const taken = await owner.call("mail.v1.ListsService", "RenameContactList", { id: (two.body.list as { id: string }).id, name: "one" });
    expect(taken.status).toBe(400);
    expect((await events({ limit: 100 })).items.length).toBe(before);
  });

  it("records webhook endpoint changes, never the signing secret", async () => {
    const created = await owner.call("mail.v1.WebhooksService", "CreateWebhookEndpoint", { url: "https://hooks.audit.example/in", events: ["delivered"] });
    expect(created.status).toBe(200);
    const endpointId = (created.body.endpoint as { id: string }).id;
    const rotated = await owner.call("mail.v1.WebhooksService", "RotateWebhookSecret", { id: endpointId });
    await owner.call("mail.v1.WebhooksService", "UpdateWebhookEndpoint", { id: endpointId, enabled: false });
    await owner.call("mail.v1.WebhooksService", "DeleteWebhookEndpoint", { id: endpointId });
    const { items } = await events({ limit: 4 });
    expect(items.map((e) => [e.action, e.targetType, e.targetId])).toEqual([
      ["webhook.deleted", "webhook_endpoint", endpointId],
      ["webhook.updated", "webhook_endpoint", endpointId],
      ["webhook.secret_rotated", "webhook_endpoint", endpointId],
      ["webhook.created", "webhook_endpoint", endpointId],
    ]);
    expect(JSON.parse(items[1]?.details ?? "{}")).toEqual({ enabled: false });
    const table = await h.db.query<{ t: string }>(`select coalesce(string_agg(row_to_json(a)::text, ' '), '') as t from audit_event a`);
    for (const secret of [created.body.secret, rotated.body.secret]) {
      expect(String(secret)).toMatch(/^whsec_/);
      expect(table.rows[0]?.t).not.toContain(String(secret));
    }
  });

  it("records manual delivery retries, in the retry's own statement", async () => {
    const created = await owner.call("mail.v1.WebhooksService", "CreateWebhookEndpoint", { url: "https://hooks.audit.example/retry", events: ["delivered"] });
    const endpointId = (created.body.endpoint as { id: string }).id;
    // Two dead letters, as five failed attempts would leave them.
    const dead = await h.db.query<{ id: string }>(
      `with e as (
         insert into webhook_event (company_id, event, occurred_at, data, dedupe_key, fanned_out_at)
         select $1, 'delivered', now(), '{}', 'audit-test-event-' || n, now() from generate_series(1, 2) n returning id
       )
       insert into webhook_delivery (company_id, endpoint_id, event_id, event, occurred_at, state, attempt_count, workflow_started_at)
       select $1, $2, e.id, 'delivered', now(), 'dead_letter', 5, now() from e returning id`,
      [companyId, endpointId],
    );
    const [one, two] = dead.rows.map((r) => r.id);
    expect((await owner.call("mail.v1.WebhooksService", "RetryWebhookDelivery", { id: one })).status).toBe(200);
    // Not a dead letter any more: refused, and nothing is written.
    expect((await owner.call("mail.v1.WebhooksService", "RetryWebhookDelivery", { id: one })).status).toBe(400);
    const batch = await owner.call("mail.v1.WebhooksService", "RetryWebhookDeadLetters", { id: endpointId, since: new Date(Date.now() - 3_600_000).toISOString() });
    expect(batch.status).toBe(200);
    const { items } = await events({ limit: 2 });
    expect(items.map((e) => [e.action, e.targetType, e.targetId])).toEqual([
      ["webhook_delivery.dead_letters_retried", "webhook_endpoint", endpointId],
      ["webhook_delivery.retried", "webhook_delivery", one],
    ]);
    expect(JSON.parse(items[0]?.details ?? "{}")).toMatchObject({ count: 1 });
    expect(two).toBeDefined();
    // No Temporal here: take the retried deliveries away before the relay tries to pass them on.
    await h.db.query(`delete from webhook_delivery where endpoint_id = $1`, [endpointId]);
  });

  it("records sign-up forms created and deactivated", async () => {
    const created = await owner.call("mail.v1.SignupFormsService", "CreateForm", {
      name: "Newsletter",
      fields: [{ name: "email", label: "Email", type: "email", required: true }],
      consentText: "Yes, send me news",
      language: "en",
    });
    expect(created.status).toBe(200);
    const publicId = (created.body.form as { publicId: string }).publicId;
    expect((await owner.call("mail.v1.SignupFormsService", "DeactivateForm", { publicId })).status).toBe(200);
    // Deactivating an inactive form changes nothing and writes nothing.
    expect((await owner.call("mail.v1.SignupFormsService", "DeactivateForm", { publicId })).status).toBe(200);
    const { items } = await events({ limit: 3 });
    expect(items.slice(0, 2).map((e) => [e.action, e.actor, e.targetId])).toEqual([
      ["signup_form.deactivated", "owner@audit.example", publicId],
      ["signup_form.created", "owner@audit.example", publicId],
    ]);
    expect(items[2]?.action).not.toBe("signup_form.deactivated");
  });

  it("records the operator's sending setup changes: domains, senders, templates", async () => {
    const domain = await h.admin.createSendingDomain({ companyId, domain: "audit.example" });
    const domainId = domain.domain?.id ?? "";
    await h.admin.verifySendingDomain({ companyId, domainId, override: true });
    const first = await h.admin.createSender({ companyId, email: "a@audit.example" });
    const second = await h.admin.createSender({ companyId, email: "b@audit.example" });
    await h.admin.setDefaultSender({ companyId, senderId: second.sender?.id ?? "" });
    const template = await h.forCompany(TemplatesService, companyId).putTemplate({ name: "receipt", subject: "Receipt", html: "<p>Thanks</p>" });
    const { items } = await events({ limit: 6 });
    expect(items.map((e) => [e.action, e.actorKind, e.targetId])).toEqual([
      ["template.put", "AUDIT_ACTOR_KIND_OPERATOR", template.template?.id],
      ["sender.made_default", "AUDIT_ACTOR_KIND_OPERATOR", second.sender?.id],
      ["sender.created", "AUDIT_ACTOR_KIND_OPERATOR", second.sender?.id],
      ["sender.created", "AUDIT_ACTOR_KIND_OPERATOR", first.sender?.id],
      ["sending_domain.verified", "AUDIT_ACTOR_KIND_OPERATOR", domainId],
      ["sending_domain.created", "AUDIT_ACTOR_KIND_OPERATOR", domainId],
    ]);
    // The DKIM private key is never in the log.
    const table = await h.db.query<{ t: string }>(`select coalesce(string_agg(row_to_json(a)::text, ' '), '') as t from audit_event a`);
    expect(table.rows[0]?.t).not.toMatch(/PRIVATE KEY/);
  });

  it("a refused change leaves no audit row (same transaction)", async () => {
    const self = (await owner.call("mail.v1.SessionService", "GetSession")).body.session as { member: { id: string } };
    const before = (await events({ limit: 100 })).items.length;
    const refused = await owner.call("mail.v1.MembersService", "RemoveMember", { id: self.member.id });
    expect(reasonOf(refused)).toBe("VALIDATION_ERROR");
    expect((await events({ limit: 100 })).items.length).toBe(before);
  });

  it("pages with a cursor and filters by actor, action and since", async () => {
    const first = await events({ limit: 3 });
    expect(first.items).toHaveLength(3);
    const seen = [...first.items];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await events({ limit: 3, cursor });
      seen.push(...page.items);
      cursor = page.nextCursor;
    }
    const all = (await events({ limit: 100 })).items;
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
    // Without a limit, a page holds 25 events, as every list's does.
    expect(all.length).toBeGreaterThan(25);
    const byDefault = await events();
    expect(byDefault.items.map((e) => e.id)).toEqual(all.slice(0, 25).map((e) => e.id));
    expect(byDefault.nextCursor).toBeDefined();
    const tooMany = await owner.call("mail.v1.AuditService", "ListAuditEvents", { limit: 101 });
    expect(tooMany.status).toBe(400);

    expect((await events({ action: "api_key.created" })).items.map((e) => e.action)).toEqual(["api_key.created"]);
    expect((await events({ actor: "operator" })).items.every((e) => e.actorKind === "AUDIT_ACTOR_KIND_OPERATOR")).toBe(true);
    expect((await events({ since: new Date(Date.now() + 60_000).toISOString() })).items).toEqual([]);
    // A cursor is bound to its filters.
    const otherFilters = await owner.call("mail.v1.AuditService", "ListAuditEvents", { limit: 3, cursor: first.nextCursor, action: "member.updated" });
    expect(otherFilters.status).toBe(400);
  });

  it("is readable with an API key holding mail.admin, and only for its own company (REST and gRPC)", async () => {
    const key = await h.newKey(companyId, ["mail.admin"]);
    const rest = await h.fetch("/mail/v1/audit-events?limit=2", bearer(key.secret));
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as { items: EventJson[] }).items).toHaveLength(2);

    const other = await newCompany(h, "Quiet Co");
    const otherKey = await h.newKey(other, ["mail.admin"]);
    const foreign = await h.fetch("/mail/v1/audit-events", bearer(otherKey.secret));
    const foreignItems = ((await foreign.json()) as { items: EventJson[] }).items;
    // Only Quiet Co's own event (its key, made by the operator); nothing of Audit Co.
    expect(foreignItems.map((e) => [e.action, e.targetId])).toEqual([["api_key.created", otherKey.keyId]]);
    const grpc = createClient(AuditService, createGrpcTransport({ baseUrl: h.app.operatorUrl }));
    const viaOperator = await grpc.listAuditEvents({}, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": other } });
    expect(viaOperator.items.map((e) => e.targetId)).toEqual([otherKey.keyId]);
    const readerKey = await h.newKey(companyId, ["mail.events.read"]);
    expect((await h.fetch("/mail/v1/audit-events", bearer(readerKey.secret))).status).toBe(403);
  });

  it("keeps 400 days: older rows are deleted by the retention job", async () => {
    await h.db.query(
      `insert into audit_event (company_id, occurred_at, actor_kind, actor, action, target_type, target_id)
       values ($1, now() - interval '401 days', 'operator', 'operator', 'member.added', 'member', 'old'),
              ($1, now() - interval '399 days', 'operator', 'operator', 'member.added', 'member', 'kept')`,
      [companyId],
    );
    await h.app.members.audit.purgeExpired();
    const left = await h.db.query<{ target_id: string }>(`select target_id from audit_event where target_id in ('old', 'kept')`);
    expect(left.rows.map((r) => r.target_id)).toEqual(["kept"]);
  });
});
