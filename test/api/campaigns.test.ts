import { randomUUID } from "node:crypto";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Client, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignState, CampaignsService } from "../../src/gen/mail/v1/campaigns_pb.js";
import { bearer } from "../support/api-harness.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type Browser, reasonOf, signedIn } from "./members-support.ts";

/**
 * Campaigns over every door (REST and gRPC with API keys, the session door
 * as the screen calls it, an operator acting for the company): drafts
 * written and edited by Mail administrators and read by everyone with
 * mail.events.read, the audience preview and the audience rules, a
 * campaign sent for real (Temporal dev server, the simulator) with
 * counters that add up, the campaign.sent event, another company's ids
 * 404 and bad input 400 naming the field.
 */

interface CampaignJson {
  id: string;
  name: string;
  state: string;
  audience: { listIds: string[]; tag: string | null };
  content: { templateId: string | null; subject: string | null; html: string | null; text: string | null };
  senderId: string | null;
  replyTo: string | null;
  trackOpens: boolean;
  trackClicks: boolean;
  sendAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  counters: Record<string, number>;
}

interface ErrorJson {
  error: { code: string; message: string; details?: Array<{ field: string; problem: string }> };
}

describe("campaigns (CampaignsService, /mail/v1/campaigns)", () => {
  let h: SendingHarness;
  let company: ReadySender;
  let reader: { secret: string };
  let sendOnly: { secret: string };
  let adminMember: Browser;
  let member: Browser;
  let other: ReadySender;
  let listA: string;
  let listB: string;

  const json = (secret: string, method: string, body?: unknown): RequestInit => ({
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const grpc = () => createClient(CampaignsService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
  const auth = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });

  async function newList(secret: string, name: string): Promise<string> {
    const response = await h.fetch("/mail/v1/lists", json(secret, "POST", { name }));
    expect(response.status).toBe(201);
    return ((await response.json()) as { list: { id: string } }).list.id;
  }

  /** Contacts written straight to the database: the audience rules read statuses, whatever set them. */
  async function contact(companyId: string, email: string, status: string, lists: string[], tags: string[] = []): Promise<string> {
    const { rows } = await h.db.query<{ id: string }>(
      `insert into contact (company_id, email, email_normalized, status, tags) values ($1, $2, lower($2), $3, $4::text[]) returning id`,
      [companyId, email, status, tags],
    );
    const id = rows[0]?.id ?? "";
    for (const list of lists) await h.db.query(`insert into contact_list_member (company_id, list_id, contact_id) values ($1, $2, $3)`, [companyId, list, id]);
    return id;
  }

  async function create(secret: string, body: Record<string, unknown>): Promise<CampaignJson> {
    const response = await h.fetch("/mail/v1/campaigns", json(secret, "POST", body));
    expect(response.status, JSON.stringify(await response.clone().json())).toBe(201);
    return ((await response.json()) as { campaign: CampaignJson }).campaign;
  }

  async function waitForState(secret: string, id: string, state: string, timeoutMs = 30_000): Promise<CampaignJson> {
    const deadline = Date.now() + timeoutMs;
    let last: CampaignJson | undefined;
    while (Date.now() < deadline) {
      last = (await (await h.fetch(`/mail/v1/campaigns/${id}`, bearer(secret))).json()) as CampaignJson;
      if (last.state === state) return last;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    throw new Error(`campaign ${id} did not become ${state}; last seen ${JSON.stringify(last)}`);
  }

  beforeAll(async () => {
    h = await startSendingHarness();
    company = await h.readySender({ credits: 100, scopes: ["mail.admin", "mail.events.read"] });
    reader = await h.newKey(company.companyId, ["mail.events.read"], "reader");
    sendOnly = await h.newKey(company.companyId, ["mail.transactional.send"], "sender");
    adminMember = await signedIn(h, company.companyId, "admin@campaigns.example", "admin");
    member = await signedIn(h, company.companyId, "member@campaigns.example", "member");
    other = await h.readySender({ credits: 10, scopes: ["mail.admin", "mail.events.read"] });
    listA = await newList(company.secret, "Newsletter");
    listB = await newList(company.secret, "Customers");
  }, 120_000);
  afterAll(async () => h?.close());

  it("writes a draft over REST, gRPC and the session door; reads it back and lists it; audits every change", async () => {
    const draft = await create(company.secret, {
      name: "  Spring sale  ",
      audience: { listIds: [listA, listB, listA], tag: "vip" },
      content: { subject: "Hello {{firstName}}", html: "<p>Hi {{firstName}}</p><script>x()</script>", text: "Hi" },
      replyTo: "help@shop.example",
      trackOpens: true,
    });
    expect(draft).toMatchObject({
      name: "Spring sale",
      state: "draft",
      audience: { listIds: [listA, listB], tag: "vip" },
      content: { templateId: null, subject: "Hello {{firstName}}" },
      senderId: null,
      replyTo: "help@shop.example",
      trackOpens: true,
      trackClicks: false,
      sendAt: null,
      counters: { audience: 0, accepted: 0, failed: 0, unknown: 0, suppressed: 0, skipped: 0, waiting: 0 },
    });

    const edited = await h.fetch(`/mail/v1/campaigns/${draft.id}`, json(company.secret, "PATCH", { name: "Spring sale 2", senderId: company.senderId, replyTo: "" }));
    expect(edited.status).toBe(200);
    expect(((await edited.json()) as { campaign: CampaignJson }).campaign).toMatchObject({
      name: "Spring sale 2",
      senderId: company.senderId,
      replyTo: null,
      audience: { listIds: [listA, listB], tag: "vip" },
    });

    const byGrpc = await grpc().createCampaign(
      { name: "By gRPC", audience: { listIds: [listA] }, content: { subject: "S", html: "<p>T</p>" } },
      auth(company.secret),
    );
    expect(byGrpc.campaign?.state).toBe(CampaignState.DRAFT);
    const bySession = await adminMember.call("mail.v1.CampaignsService", "CreateCampaign", {
      name: "By session",
      audience: { listIds: [listB] },
      content: { subject: "S", html: "<p>x</p>" },
    });
    expect(bySession.status).toBe(200);
    const byOperator = await h.forCompany(CampaignsService, company.companyId).getCampaign({ id: draft.id });
    expect(byOperator.campaign?.name).toBe("Spring sale 2");

    // Every reader reads; the list is newest first and filters by state.
    const got = await h.fetch(`/mail/v1/campaigns/${draft.id}`, bearer(reader.secret));
    expect(got.status).toBe(200);
    expect(((await got.json()) as CampaignJson).name).toBe("Spring sale 2");
    const list = (await (await h.fetch("/mail/v1/campaigns?state=draft&limit=2", bearer(reader.secret))).json()) as { items: CampaignJson[]; nextCursor: string | null };
    expect(list.items.map((c) => c.name)).toEqual(["By session", "By gRPC"]);
    expect(list.nextCursor).not.toBeNull();
    const next = (await (await h.fetch(`/mail/v1/campaigns?state=draft&limit=2&cursor=${list.nextCursor}`, bearer(reader.secret))).json()) as { items: CampaignJson[] };
    expect(next.items.map((c) => c.name)).toEqual(["Spring sale 2"]);
    const memberList = await member.call("mail.v1.CampaignsService", "ListCampaigns", {});
    expect(memberList.status).toBe(200);

    const audit = (await h.db.query<{ action: string; actor: string }>(
      `select action, actor from audit_event where company_id = $1 and target_type = 'campaign' order by occurred_at`,
      [company.companyId],
    )).rows;
    expect(audit.map((row) => row.action)).toEqual(["campaign.created", "campaign.updated", "campaign.created", "campaign.created"]);
    expect(audit[3]?.actor).toBe("admin@campaigns.example");
  });

  it("members and keys without mail.admin read but change nothing (403)", async () => {
    const campaign = await create(company.secret, { name: "Roles", audience: { listIds: [listA] }, content: { subject: "S", html: "<p>T</p>" } });
    const byMember = await member.call("mail.v1.CampaignsService", "UpdateCampaign", { id: campaign.id, name: "Mine" });
    expect(byMember.status).toBe(403);
    expect(reasonOf(byMember)).toBe("FORBIDDEN");
    expect((await h.fetch("/mail/v1/campaigns", json(reader.secret, "POST", { name: "x" }))).status).toBe(403);
    expect((await h.fetch(`/mail/v1/campaigns/${campaign.id}/schedule`, json(reader.secret, "POST", {}))).status).toBe(403);
    expect((await h.fetch("/mail/v1/campaigns", bearer(sendOnly.secret))).status).toBe(403);
    const preview = await member.call("mail.v1.CampaignsService", "PreviewCampaignAudience", { id: campaign.id });
    expect(preview.status).toBe(200);
  });

  it("another company's campaign answers 404 on every route and door, and stays as it was", async () => {
    const otherList = await newList(other.secret, "Theirs");
    const theirs = await create(other.secret, { name: "Theirs", audience: { listIds: [otherList] }, content: { subject: "S", html: "<p>T</p>" } });
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/mail/v1/campaigns/${theirs.id}`],
      ["PATCH", `/mail/v1/campaigns/${theirs.id}`, { name: "Mine" }],
      ["GET", `/mail/v1/campaigns/${theirs.id}/audience`],
      ["GET", `/mail/v1/campaigns/${theirs.id}/results`],
      ["POST", `/mail/v1/campaigns/${theirs.id}/schedule`, {}],
      ["POST", `/mail/v1/campaigns/${theirs.id}/pause`, {}],
      ["POST", `/mail/v1/campaigns/${theirs.id}/resume`, {}],
      ["POST", `/mail/v1/campaigns/${theirs.id}/cancel`, {}],
      ["POST", `/mail/v1/campaigns/${theirs.id}/test`, {}],
      ["GET", `/mail/v1/campaigns/${randomUUID()}`],
      ["GET", `/mail/v1/campaigns/not-a-uuid`],
    ];
    for (const [method, url, body] of routes) {
      const response = await h.fetch(url, json(company.secret, method, body));
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(((await response.json()) as ErrorJson).error.code).toBe("NOT_FOUND");
    }
    const byGrpc = await grpc().getCampaign({ id: theirs.id }, auth(company.secret)).catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.NotFound);
    const bySession = await adminMember.call("mail.v1.CampaignsService", "CancelCampaign", { id: theirs.id });
    expect(bySession.status).toBe(404);
    // Their list is no list of ours either.
    const borrowed = await h.fetch("/mail/v1/campaigns", json(company.secret, "POST", { name: "x", audience: { listIds: [otherList] }, content: { subject: "S", html: "<p>T</p>" } }));
    expect(borrowed.status).toBe(400);
    expect(JSON.stringify(await borrowed.json())).toContain("audience.listIds");
    const mine = (await (await h.fetch(`/mail/v1/campaigns/${theirs.id}`, bearer(other.secret))).json()) as CampaignJson;
    expect(mine).toMatchObject({ name: "Theirs", state: "draft" });
    expect((await h.fetch("/mail/v1/campaigns?limit=100", bearer(other.secret)).then((r) => r.json()) as { items: CampaignJson[] }).items.map((c) => c.id)).toEqual([theirs.id]);
  });

  it("bad input answers 400 VALIDATION_ERROR naming the field", async () => {
    const valid = { name: "x", audience: { listIds: [listA] }, content: { subject: "S", html: "<p>T</p>" } };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, name: "   " }, "name"],
      [{ ...valid, name: "n".repeat(201) }, "name"],
      [{ ...valid, audience: { listIds: [] } }, "audience"],
      [{ ...valid, audience: { listIds: ["nope"] } }, "audience.listIds"],
      [{ ...valid, audience: { listIds: [randomUUID()] } }, "audience.listIds"],
      [{ ...valid, content: { subject: "S" } }, "content.html"],
      [{ ...valid, content: { html: "<p>x</p>" } }, "content.subject"],
      [{ ...valid, content: { templateId: randomUUID(), subject: "S" } }, "content"],
      [{ ...valid, replyTo: "not an address" }, "replyTo"],
      [{ ...valid, senderId: "nope" }, "senderId"],
      [{ ...valid, unknownField: 1 }, "unknownField"],
    ];
    for (const [body, field] of cases) {
      const response = await h.fetch("/mail/v1/campaigns", json(company.secret, "POST", body));
      const answer = (await response.json()) as ErrorJson;
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(answer.error.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(answer.error), JSON.stringify(body)).toContain(field);
    }
    for (const [url, field] of [
      ["/mail/v1/campaigns?limit=0", "limit"],
      ["/mail/v1/campaigns?state=flying", "state"],
      ["/mail/v1/campaigns?cursor=forged", "cursor"],
    ] as const) {
      const response = await h.fetch(url, bearer(reader.secret));
      expect(response.status, url).toBe(400);
      expect(JSON.stringify(await response.json())).toContain(field);
    }
  });

  it("previews the audience, sends to it for real, and counts every contact once: the counters add up and campaign.sent says so", async () => {
    const [a1, a2, t] = [
      await contact(company.companyId, "both@aud.example", "subscribed", [listA, listB]),
      await contact(company.companyId, "one@aud.example", "subscribed", [listA]),
      await contact(company.companyId, "Tagged@aud.example", "subscribed", [listB], ["vip"]),
    ];
    await contact(company.companyId, "pending@aud.example", "pending", [listA]);
    await contact(company.companyId, "gone@aud.example", "unsubscribed", [listB]);
    await contact(company.companyId, "bounced@aud.example", "bounced", [listA]);
    await contact(company.companyId, "listed@aud.example", "subscribed", [listB]);
    await h.app.suppressions.suppress({ companyId: company.companyId, email: "listed@aud.example", reason: "manual" });

    const campaign = await create(company.secret, {
      name: "For real",
      audience: { listIds: [listA, listB] },
      content: { subject: "Hi {{email}}", html: "<p>Hello {{email}}</p>", text: "Hello {{email}}" },
    });
    const preview = await h.fetch(`/mail/v1/campaigns/${campaign.id}/audience`, bearer(reader.secret));
    expect(await preview.json()).toEqual({ audience: 7, receive: 3, skipped: 2, suppressed: 2 });
    const tagged = await create(company.secret, { name: "Tagged", audience: { listIds: [listA, listB], tag: "vip" }, content: { subject: "S", html: "<p>T</p>" } });
    expect(await (await h.fetch(`/mail/v1/campaigns/${tagged.id}/audience`, bearer(reader.secret))).json()).toEqual({ audience: 1, receive: 1, skipped: 0, suppressed: 0 });

    const balanceBefore = await credits(company.companyId);
    const scheduled = await h.fetch(`/mail/v1/campaigns/${campaign.id}/schedule`, json(company.secret, "POST", {}));
    expect(scheduled.status).toBe(200);
    expect(((await scheduled.json()) as { campaign: CampaignJson }).campaign.state).toBe("scheduled");
    const sent = await waitForState(reader.secret, campaign.id, "sent");
    expect(sent.counters).toEqual({ audience: 7, accepted: 3, failed: 0, unknown: 0, suppressed: 2, skipped: 2, waiting: 0 });
    expect(sent.startedAt).not.toBeNull();
    expect(sent.finishedAt).not.toBeNull();

    // Editing or scheduling it again is refused by its state.
    const again = await h.fetch(`/mail/v1/campaigns/${campaign.id}`, json(company.secret, "PATCH", { name: "Later" }));
    expect(again.status).toBe(409);
    expect(((await again.json()) as ErrorJson).error.code).toBe("CAMPAIGN_STATE_CONFLICT");

    // One copy per subscribed contact, as messages of the campaign; one credit each.
    const copies = (await h.db.query<{ recipient: string; contact_id: string; status: string }>(
      `select recipient, contact_id, status from message where company_id = $1 and campaign_id = $2 order by recipient`,
      [company.companyId, campaign.id],
    )).rows;
    expect(copies.map((c) => c.recipient).sort()).toEqual(["Tagged@aud.example", "both@aud.example", "one@aud.example"].sort());
    expect(new Set(copies.map((c) => c.contact_id))).toEqual(new Set([a1, a2, t]));
    expect(copies.every((c) => c.status !== "queued" && c.status !== "processing")).toBe(true);
    expect(balanceBefore - (await credits(company.companyId))).toBe(3);

    // The webhook events: `sent` with the campaign fields per copy (no message.accepted), and campaign.sent once.
    const events = (await h.db.query<{ event: string; data: Record<string, unknown> }>(
      `select event, data from webhook_event where company_id = $1 and (data->>'campaignId') = $2 order by id`,
      [company.companyId, campaign.id],
    )).rows;
    const sentEvents = events.filter((e) => e.event === "sent");
    expect(sentEvents).toHaveLength(3);
    for (const e of sentEvents) {
      expect(Object.keys(e.data).sort()).toEqual(["campaignId", "contactId", "email", "occurredAt", "recipientId"]);
    }
    expect(events.filter((e) => e.event === "message.accepted")).toEqual([]);
    const summary = events.filter((e) => e.event === "campaign.sent");
    expect(summary).toHaveLength(1);
    expect(summary[0]?.data).toEqual({ campaignId: campaign.id, accepted: 3, failed: 0, suppressed: 2, skipped: 2, unknown: 0, occurredAt: expect.any(String) });

    const results = await h.fetch(`/mail/v1/campaigns/${campaign.id}/results`, bearer(reader.secret));
    // No links in its content, nobody opened yet, no conversion: the breakdowns are empty, drawn by the hour.
    expect(await results.json()).toEqual({ counters: sent.counters, opened: 0, clicked: 0, unsubscribed: 0, links: [], revenue: [], interval: "hour", timeline: [] });
    const byGrpc = await grpc().getCampaignResults({ id: campaign.id }, auth(reader.secret));
    expect(byGrpc.counters?.accepted).toBe(3);
  }, 60_000);

  it("bounces and complaints of campaign copies come back through the delivery loop: campaign-form events, suppressions, contacts marked; a rejected copy is failed and refunded", async () => {
    const listC = await newList(company.secret, "Loop");
    const bounced = await contact(company.companyId, "bounce+c7@loop.example", "subscribed", [listC]);
    const complained = await contact(company.companyId, "complaint+c7@loop.example", "subscribed", [listC]);
    await contact(company.companyId, "reject+c7@loop.example", "subscribed", [listC]);
    await contact(company.companyId, "fine+c7@loop.example", "subscribed", [listC]);
    const campaign = await create(company.secret, { name: "Loop", audience: { listIds: [listC] }, content: { subject: "S", html: "<p>T</p>" } });
    const balanceBefore = await credits(company.companyId);
    expect((await h.fetch(`/mail/v1/campaigns/${campaign.id}/schedule`, json(company.secret, "POST", {}))).status).toBe(200);
    const sent = await waitForState(reader.secret, campaign.id, "sent");
    expect(sent.counters).toEqual({ audience: 4, accepted: 3, failed: 1, unknown: 0, suppressed: 0, skipped: 0, waiting: 0 });

    const deadline = Date.now() + 20_000;
    let events: Array<{ event: string; data: Record<string, unknown> }> = [];
    while (Date.now() < deadline) {
      events = (await h.db.query<{ event: string; data: Record<string, unknown> }>(
        `select event, data from webhook_event where company_id = $1 and (data->>'campaignId') = $2 and event in ('bounced', 'complaint', 'delivered', 'failed')`,
        [company.companyId, campaign.id],
      )).rows;
      if (events.some((e) => e.event === "bounced") && events.some((e) => e.event === "complaint")) break;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const of = (event: string) => events.filter((e) => e.event === event).map((e) => e.data);
    expect(of("bounced")).toEqual([{ campaignId: campaign.id, recipientId: expect.any(String), contactId: bounced, email: "bounce+c7@loop.example", occurredAt: expect.any(String) }]);
    expect(of("complaint")).toEqual([{ campaignId: campaign.id, recipientId: expect.any(String), contactId: complained, email: "complaint+c7@loop.example", occurredAt: expect.any(String) }]);
    expect(of("failed").map((d) => d.email)).toEqual(["reject+c7@loop.example"]);
    expect(of("failed")[0]).not.toHaveProperty("error");

    const suppressed = (await h.db.query<{ email: string; reason: string }>(
      `select email, reason from suppression where company_id = $1 and email like '%+c7@loop.example' order by email`,
      [company.companyId],
    )).rows;
    expect(suppressed).toEqual([
      { email: "bounce+c7@loop.example", reason: "bounce" },
      { email: "complaint+c7@loop.example", reason: "complaint" },
    ]);
    const statuses = (await h.db.query<{ email: string; status: string }>(
      `select email, status from contact where company_id = $1 and email like '%+c7@loop.example' order by email`,
      [company.companyId],
    )).rows;
    expect(statuses.filter((c) => c.status !== "subscribed")).toEqual([
      { email: "bounce+c7@loop.example", status: "bounced" },
      { email: "complaint+c7@loop.example", status: "complained" },
    ]);
    // Three charged (the bounce and the complaint keep theirs), the rejected one refunded.
    expect(balanceBefore - (await credits(company.companyId))).toBe(3);
  }, 60_000);

  it("schedules for later, moves the time, cancels before it starts (nothing sent, no campaign.sent); state rules answer 409", async () => {
    await contact(company.companyId, "later@aud.example", "subscribed", [listA]);
    const campaign = await create(company.secret, { name: "Later", audience: { listIds: [listA] }, content: { subject: "S", html: "<p>T</p>" } });
    const pause = await h.fetch(`/mail/v1/campaigns/${campaign.id}/pause`, json(company.secret, "POST", {}));
    expect(pause.status).toBe(409);
    expect(((await pause.json()) as ErrorJson).error.code).toBe("CAMPAIGN_STATE_CONFLICT");
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = (await (await h.fetch(`/mail/v1/campaigns/${campaign.id}/schedule`, json(company.secret, "POST", { sendAt: at }))).json()) as { campaign: CampaignJson };
    expect(scheduled.campaign).toMatchObject({ state: "scheduled", sendAt: at });
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const moved = (await (await h.fetch(`/mail/v1/campaigns/${campaign.id}/schedule`, json(company.secret, "POST", { sendAt: later }))).json()) as { campaign: CampaignJson };
    expect(moved.campaign.sendAt).toBe(later);
    const cancelled = await adminMember.call("mail.v1.CampaignsService", "CancelCampaign", { id: campaign.id });
    expect(cancelled.status).toBe(200);
    expect((cancelled.body.campaign as { state: string }).state).toBe("CAMPAIGN_STATE_CANCELLED");
    const resume = await h.fetch(`/mail/v1/campaigns/${campaign.id}/resume`, json(company.secret, "POST", {}));
    expect(resume.status).toBe(409);
    // The workflow ends without sending anything.
    const connection = await Connection.connect({ address: h.temporal.address });
    try {
      const handle = new Client({ connection }).workflow.getHandle(`campaign-${campaign.id}`);
      expect(await handle.result()).toBe("cancelled");
    } finally {
      await connection.close();
    }
    const copies = await h.db.query(`select 1 from message where campaign_id = $1`, [campaign.id]);
    expect(copies.rows).toEqual([]);
    const summary = await h.db.query(`select 1 from webhook_event where event = 'campaign.sent' and data->>'campaignId' = $1`, [campaign.id]);
    expect(summary.rows).toEqual([]);
  }, 60_000);

  it("sends a test copy to the signed-in member only (202); keys and operators get 403", async () => {
    const campaign = await create(company.secret, { name: "Test me", audience: { listIds: [listA] }, content: { subject: "Try {{email}}", html: "<p>Body</p>" } });
    const bySession = await adminMember.call("mail.v1.CampaignsService", "SendCampaignTest", { id: campaign.id });
    expect(bySession.status, JSON.stringify(bySession.body)).toBe(200);
    expect(bySession.body).toMatchObject({ email: "admin@campaigns.example", messageId: expect.any(String) });
    const message = await h.db.query<{ recipient: string; subject: string; campaign_id: string | null }>(
      `select recipient, subject, campaign_id from message where company_id = $1 and id = $2`,
      [company.companyId, bySession.body.messageId],
    );
    expect(message.rows[0]).toEqual({ recipient: "admin@campaigns.example", subject: "Try admin@campaigns.example", campaign_id: null });
    const byKey = await h.fetch(`/mail/v1/campaigns/${campaign.id}/test`, json(company.secret, "POST", {}));
    expect(byKey.status).toBe(403);
    const byMember = await member.call("mail.v1.CampaignsService", "SendCampaignTest", { id: campaign.id });
    expect(byMember.status).toBe(403);
  });

  async function credits(companyId: string): Promise<number> {
    const { rows } = await h.db.query<{ balance: string }>(`select balance from credit_wallet where company_id = $1`, [companyId]);
    return Number(rows[0]?.balance ?? 0);
  }
});
