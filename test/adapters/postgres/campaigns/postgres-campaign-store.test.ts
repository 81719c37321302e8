import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditAction, AuditNote } from "../../../../src/capabilities/audit/types.ts";
import type { CampaignDraft, CampaignRecord, CampaignState } from "../../../../src/capabilities/campaigns/ports.ts";
import { PostgresCampaignStore } from "../../../../src/adapters/postgres/campaigns/postgres-campaign-store.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

const note = (action: AuditAction): AuditNote => ({
  context: { actor: { kind: "operator", label: "operator" }, requestId: "req", clientIp: "" },
  action,
  details: {},
});

const draft = (listIds: readonly string[], changes: Partial<CampaignDraft> = {}): CampaignDraft => ({
  name: "News",
  listIds,
  tag: null,
  templateId: null,
  subject: "Hello",
  html: "<p>Hello</p>",
  text: null,
  senderId: null,
  replyTo: null,
  trackOpens: true,
  trackClicks: false,
  ...changes,
});

const POSITION = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** The campaign store on PostgreSQL: its reads and pages, its locks, the audience it fixes and the end it records, per company. */
describe("PostgresCampaignStore", () => {
  let h: SendingHarness;
  let store: PostgresCampaignStore;

  beforeAll(async () => {
    h = await openSendingHarness();
    store = new PostgresCampaignStore(h.orm);
  });

  afterAll(async () => {
    await h?.close();
  });

  const newList = async (companyId: string, name = `list-${randomUUID()}`): Promise<string> =>
    (await h.db.query<{ id: string }>(`insert into contact_list (company_id, name) values ($1, $2) returning id`, [companyId, name])).rows[0]?.id ?? "";

  /** A contact in the lists given; its address is stored as given and normalised to lower case. */
  const newContact = async (companyId: string, email: string, status: string, listIds: readonly string[], tags: readonly string[] = []): Promise<string> => {
    const { rows } = await h.db.query<{ id: string }>(
      `insert into contact (company_id, email, email_normalized, status, tags) values ($1, $2, lower($2), $3, $4::text[]) returning id`,
      [companyId, email, status, tags],
    );
    const id = rows[0]?.id ?? "";
    for (const listId of listIds) {
      await h.db.query(`insert into contact_list_member (company_id, list_id, contact_id) values ($1, $2, $3)`, [companyId, listId, id]);
    }
    return id;
  };

  const audited = async (companyId: string): Promise<string[]> =>
    (await h.db.query<{ action: string }>(`select action from audit_event where company_id = $1 order by occurred_at, action`, [companyId])).rows.map((r) => r.action);

  const newCampaign = async (companyId: string, listIds: readonly string[], changes: Partial<CampaignDraft> = {}): Promise<CampaignRecord> =>
    store.create(companyId, randomUUID(), draft(listIds, changes), note("campaign.created"));

  /** A campaign scheduled for a time already past, so that `start` fixes its audience. */
  const dueCampaign = async (companyId: string, listIds: readonly string[], tag: string | null = null): Promise<string> => {
    const campaign = await newCampaign(companyId, listIds, { tag });
    await store.changeState(companyId, campaign.id, () => ({ state: "scheduled", sendAt: new Date(Date.now() - 1000), audit: note("campaign.scheduled") }));
    return campaign.id;
  };

  const recipients = async (campaignId: string): Promise<{ email: string; outcome: string }[]> =>
    (await h.db.query<{ email: string; outcome: string }>(`select email, outcome from campaign_recipient where campaign_id = $1 order by email`, [campaignId])).rows;

  it("creates, finds, updates and changes the state of a campaign, each change with its audit row", async () => {
    const companyId = await h.newCompany();
    const list = await newList(companyId);
    const id = randomUUID();
    const created = await store.create(companyId, id, draft([list], { tag: "vip", text: "Hello" }), note("campaign.created"));
    expect(created).toEqual({
      id,
      companyId,
      name: "News",
      state: "draft",
      listIds: [list],
      tag: "vip",
      templateId: null,
      subject: "Hello",
      html: "<p>Hello</p>",
      text: "Hello",
      senderId: null,
      replyTo: null,
      trackOpens: true,
      trackClicks: false,
      sendAt: null,
      startedAt: null,
      finishedAt: null,
      counters: { audience: 0, accepted: 0, failed: 0, unknown: 0, suppressed: 0, skipped: 0, waiting: 0 },
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    expect(await store.find(companyId, id)).toEqual(created);
    expect(await store.stateOf(companyId, id)).toBe("draft");

    const senderId = randomUUID();
    const seen: CampaignRecord[] = [];
    const updated = await store.update(companyId, id, (current) => {
      seen.push(current);
      return { draft: draft([list], { name: "Renamed", tag: null, senderId, replyTo: "reply@example.com", trackClicks: true }), audit: note("campaign.updated") };
    });
    expect(seen.map((c) => c.name)).toEqual(["News"]);
    expect(updated).toMatchObject({ name: "Renamed", tag: null, senderId, replyTo: "reply@example.com", trackClicks: true, text: null, state: "draft" });
    expect(updated?.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());

    // A refused decision changes nothing and writes no audit row.
    await expect(
      store.update(companyId, id, () => {
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(await store.find(companyId, id)).toMatchObject({ name: "Renamed" });

    const sendAt = new Date("2031-05-01T10:00:00.000Z");
    const scheduled = await store.changeState(companyId, id, () => ({ state: "scheduled", sendAt, audit: note("campaign.scheduled") }));
    expect(scheduled).toMatchObject({ state: "scheduled", sendAt, finishedAt: null });
    // A change without a time keeps the stored one; `finished` ends the campaign now.
    const cancelled = await store.changeState(companyId, id, () => ({ state: "cancelled", finished: true, audit: note("campaign.cancelled") }));
    expect(cancelled).toMatchObject({ state: "cancelled", sendAt, finishedAt: expect.any(Date) });
    expect(await store.stateOf(companyId, id)).toBe("cancelled");
    expect(await audited(companyId)).toEqual(["campaign.created", "campaign.updated", "campaign.scheduled", "campaign.cancelled"]);

    await store.markWorkflowStarted(companyId, id);
    const first = (await h.db.query<{ at: Date }>(`select workflow_started_at as at from campaign where id = $1`, [id])).rows[0]?.at;
    expect(first).toBeInstanceOf(Date);
    await store.markWorkflowStarted(companyId, id);
    expect((await h.db.query<{ at: Date }>(`select workflow_started_at as at from campaign where id = $1`, [id])).rows[0]?.at).toEqual(first);
  });

  it("lists newest first in pages by microsecond (created_at, id) positions: no campaign repeated or skipped, also within one instant", async () => {
    const companyId = await h.newCompany();
    const list = await newList(companyId);
    const made: CampaignRecord[] = [];
    for (let i = 0; i < 7; i++) made.push(await newCampaign(companyId, [list], { name: `c${i}` }));
    // Four of them created within one microsecond: only the id orders them.
    const same = made.slice(1, 5).map((c) => c.id);
    await h.db.query(`update campaign set created_at = '2030-01-01T00:00:00.123456Z' where id = any($1::uuid[])`, [same]);
    await store.changeState(companyId, made[6]?.id ?? "", () => ({ state: "scheduled", sendAt: new Date(), audit: note("campaign.scheduled") }));

    const pages: string[][] = [];
    let after = null;
    for (;;) {
      const page = await store.list(companyId, undefined, after, 2);
      if (page.length === 0) break;
      for (const row of page) expect(row.position.createdAt).toMatch(POSITION);
      pages.push(page.map((row) => row.item.id));
      after = page[page.length - 1]?.position ?? null;
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 1]);
    const expected = (await h.db.query<{ id: string }>(`select id from campaign where company_id = $1 order by created_at desc, id desc`, [companyId])).rows.map((r) => r.id);
    expect(pages.flat()).toEqual(expected);
    expect(new Set(pages.flat()).size).toBe(7);
    const within = await store.list(companyId, undefined, null, 10);
    expect(within.filter((row) => same.includes(row.item.id)).map((row) => row.position.createdAt)).toEqual(Array(4).fill("2030-01-01T00:00:00.123456Z"));

    expect((await store.list(companyId, "scheduled", null, 10)).map((row) => row.item.id)).toEqual([made[6]?.id]);
    expect(await store.list(companyId, "sent", null, 10)).toEqual([]);
    expect((await store.list(companyId, "draft", null, 10)).map((row) => row.item.counters.audience)).toEqual(Array(6).fill(0));
  });

  it("tenant isolation: another company's campaign, lists and recipients are not found, changed or counted; ids that cannot be row ids find nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const list = await newList(a);
    const contact = await newContact(a, "reader@example.com", "subscribed", [list]);
    const id = await dueCampaign(a, [list]);
    expect(await store.start(b, id)).toBeUndefined();
    expect(await store.start(a, id)).toEqual({ state: "sending", waitMs: 0 });
    const recipientId = (await h.db.query<{ id: string }>(`select id from campaign_recipient where campaign_id = $1`, [id])).rows[0]?.id ?? "";

    const never = () => {
      throw new Error("decided on another company's campaign");
    };
    expect(await store.find(b, id)).toBeUndefined();
    expect(await store.stateOf(b, id)).toBeUndefined();
    expect(await store.update(b, id, never)).toBeUndefined();
    expect(await store.changeState(b, id, never)).toBeUndefined();
    expect(await store.results(b, id)).toBeUndefined();
    expect(await store.finish(b, id, new Date())).toBeUndefined();
    expect(await store.list(b, undefined, null, 10)).toEqual([]);
    expect(await store.missingLists(b, [list])).toEqual([list]);
    expect(await store.previewAudience(b, [list], null)).toEqual({ audience: 0, receive: 0, skipped: 0, suppressed: 0 });
    expect(await store.countWaiting(b, id)).toBe(0);
    expect(await store.waiting(b, id, 10)).toEqual([]);
    await store.settle(b, recipientId, "accepted", new Date());
    await store.recordOpen(b, recipientId, new Date());
    await store.markWorkflowStarted(b, id);
    expect((await store.waiting(a, id, 10)).map((r) => r.contactId)).toEqual([contact]);
    expect(await store.results(a, id)).toMatchObject({ opened: 0, counters: { waiting: 1, accepted: 0 } });
    expect((await h.db.query(`select 1 from campaign where id = $1 and workflow_started_at is null`, [id])).rows).toHaveLength(1);
    expect(await store.stateOf(a, id)).toBe("sending");

    for (const bad of ["not-a-uuid", "", `${id}x`]) {
      expect(await store.find(a, bad)).toBeUndefined();
      expect(await store.find(bad, id)).toBeUndefined();
      expect(await store.stateOf(a, bad)).toBeUndefined();
      expect(await store.update(a, bad, never)).toBeUndefined();
      expect(await store.changeState(a, bad, never)).toBeUndefined();
      expect(await store.results(a, bad)).toBeUndefined();
      expect(await store.start(a, bad)).toBeUndefined();
      expect(await store.finish(a, bad, new Date())).toBeUndefined();
      expect(await store.list(bad, undefined, null, 10)).toEqual([]);
      expect(await store.previewAudience(bad, [list], null)).toEqual({ audience: 0, receive: 0, skipped: 0, suppressed: 0 });
      await store.markWorkflowStarted(a, bad);
      await store.recordClick(a, bad, new Date());
      await store.recordClick(bad, recipientId, new Date());
    }
    // The ids a list check names: what PostgreSQL would answer (lower case), the unknown and the impossible as given.
    const unknown = randomUUID();
    expect(await store.missingLists(a, [list.toUpperCase(), unknown, "nope"])).toEqual([unknown, "nope"]);
    expect(await store.missingLists(a, [])).toEqual([]);
    expect(await store.missingLists("nope", [list])).toEqual([list]);
  });

  it("of concurrent state changes on one campaign exactly one moves it; the others see the move and are refused", async () => {
    const companyId = await h.newCompany();
    const list = await newList(companyId);
    const { id } = await newCampaign(companyId, [list]);
    const decisions: CampaignState[] = [];
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        store.changeState(companyId, id, (current) => {
          decisions.push(current.state);
          if (current.state !== "draft") throw new Error(`cannot schedule a ${current.state} campaign`);
          return { state: "scheduled", sendAt: new Date(), audit: note("campaign.scheduled") };
        }),
      ),
    );
    expect(attempts.filter((a) => a.status === "fulfilled")).toHaveLength(1);
    expect(decisions.filter((state) => state === "draft")).toHaveLength(1);
    expect(decisions.filter((state) => state === "scheduled")).toHaveLength(7);
    expect(await audited(companyId)).toEqual(["campaign.created", "campaign.scheduled"]);
  });

  it("starts once whatever the number of concurrent starts; before its time a campaign waits and fixes nothing", async () => {
    const companyId = await h.newCompany();
    const list = await newList(companyId);
    for (let i = 0; i < 20; i++) await newContact(companyId, `r${i}@example.com`, "subscribed", [list]);

    const later = await newCampaign(companyId, [list]);
    await store.changeState(companyId, later.id, () => ({ state: "scheduled", sendAt: new Date(Date.now() + 60_000), audit: note("campaign.scheduled") }));
    const waiting = await store.start(companyId, later.id);
    expect(waiting?.state).toBe("scheduled");
    expect(waiting?.waitMs).toBeGreaterThan(50_000);
    expect(waiting?.waitMs).toBeLessThanOrEqual(60_000);
    expect(await recipients(later.id)).toEqual([]);

    // Every write of a campaign's state, recorded by a trigger of this test's database.
    await h.db.query(`create table test_state_write (campaign_id uuid, from_state text, to_state text)`);
    await h.db.query(`create function test_record_state_write() returns trigger language plpgsql as $$
                        begin insert into test_state_write values (new.id, old.state, new.state); return new; end $$`);
    await h.db.query(`create trigger test_state_write after update of state on campaign for each row execute function test_record_state_write()`);
    const id = await dueCampaign(companyId, [list]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => store.start(companyId, id)));
    await h.db.query(`drop trigger test_state_write on campaign`);
    expect(answers).toEqual(Array(8).fill({ state: "sending", waitMs: 0 }));
    expect((await h.db.query(`select from_state, to_state from test_state_write where campaign_id = $1`, [id])).rows).toEqual([
      { from_state: "draft", to_state: "scheduled" },
      { from_state: "scheduled", to_state: "sending" },
    ]);
    expect(await recipients(id)).toHaveLength(20);
    const started = await store.find(companyId, id);
    expect(started).toMatchObject({ state: "sending", startedAt: expect.any(Date), counters: { audience: 20, waiting: 20 } });
    // A later start changes nothing.
    expect(await store.start(companyId, id)).toEqual({ state: "sending", waitMs: 0 });
    expect(await store.find(companyId, id)).toEqual(started);
  });

  it("previews the audience as `start` fixes it: each contact once, skipped and suppressed by status and the suppression list, by tag; and counts the results", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany("Other");
    const one = await newList(companyId);
    const two = await newList(companyId);
    const elsewhere = await newList(other);
    await newContact(companyId, "both@example.com", "subscribed", [one, two], ["vip"]);
    await newContact(companyId, "plain@example.com", "subscribed", [one]);
    await newContact(companyId, "pending@example.com", "pending", [one]);
    await newContact(companyId, "gone@example.com", "unsubscribed", [two], ["vip"]);
    await newContact(companyId, "bounced@example.com", "bounced", [two]);
    await newContact(companyId, "Listed@Example.com", "subscribed", [two], ["vip"]);
    await newContact(companyId, "outside@example.com", "subscribed", []);
    await newContact(other, "other@example.com", "subscribed", [elsewhere]);
    await h.db.query(`insert into suppression (company_id, email, reason) values ($1, 'listed@example.com', 'manual')`, [companyId]);

    expect(await store.previewAudience(companyId, [one, two], null)).toEqual({ audience: 6, receive: 2, skipped: 2, suppressed: 2 });
    expect(await store.previewAudience(companyId, [one, two], "vip")).toEqual({ audience: 3, receive: 1, skipped: 1, suppressed: 1 });
    expect(await store.previewAudience(companyId, [one, two, elsewhere], "nobody")).toEqual({ audience: 0, receive: 0, skipped: 0, suppressed: 0 });
    expect(await store.previewAudience(companyId, [two, elsewhere], null)).toEqual({ audience: 4, receive: 1, skipped: 1, suppressed: 2 });

    const id = await dueCampaign(companyId, [one, two]);
    await store.start(companyId, id);
    expect(await recipients(id)).toEqual([
      { email: "Listed@Example.com", outcome: "suppressed" },
      { email: "both@example.com", outcome: "waiting" },
      { email: "bounced@example.com", outcome: "suppressed" },
      { email: "gone@example.com", outcome: "skipped" },
      { email: "pending@example.com", outcome: "skipped" },
      { email: "plain@example.com", outcome: "waiting" },
    ]);
    const tagged = await dueCampaign(companyId, [one, two], "vip");
    await store.start(companyId, tagged);
    expect((await recipients(tagged)).map((r) => r.email)).toEqual(["Listed@Example.com", "both@example.com", "gone@example.com"]);

    const [first, second] = await store.waiting(companyId, id, 10);
    expect(await store.countWaiting(companyId, id)).toBe(2);
    await store.settle(companyId, first?.id ?? "", "accepted", new Date());
    await store.settle(companyId, second?.id ?? "", "failed", new Date());
    // Settled once: a repeated settle changes nothing.
    await store.settle(companyId, first?.id ?? "", "unknown", new Date());
    const opened = new Date("2030-02-01T00:00:00.000Z");
    await store.recordOpen(companyId, first?.id ?? "", opened);
    await store.recordOpen(companyId, first?.id ?? "", new Date("2030-03-01T00:00:00.000Z"));
    await store.recordOpen(companyId, second?.id ?? "", opened);
    await store.recordClick(companyId, first?.id ?? "", opened);
    await store.recordUnsubscribe(companyId, second?.id ?? "", opened);
    const { rows } = await h.db.query<{ opened_at: Date }>(`select opened_at from campaign_recipient where id = $1`, [first?.id]);
    expect(rows[0]?.opened_at).toEqual(opened);

    expect(await store.results(companyId, id)).toEqual({
      counters: { audience: 6, accepted: 1, failed: 1, unknown: 0, suppressed: 2, skipped: 2, waiting: 0 },
      opened: 2,
      clicked: 1,
      unsubscribed: 1,
      startedAt: expect.any(Date),
    });
    const draftOnly = await newCampaign(companyId, [one]);
    expect(await store.results(companyId, draftOnly.id)).toEqual({
      counters: { audience: 0, accepted: 0, failed: 0, unknown: 0, suppressed: 0, skipped: 0, waiting: 0 },
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
      startedAt: null,
    });
  });

  it("finishes a cancelled campaign by counting its waiting recipients skipped, and records campaign.sent once with the counters", async () => {
    const companyId = await h.newCompany();
    const list = await newList(companyId);
    for (let i = 0; i < 5; i++) await newContact(companyId, `r${i}@example.com`, "subscribed", [list]);
    await newContact(companyId, "pending@example.com", "pending", [list]);
    const events = async (campaignId: string) =>
      (await h.db.query<{ data: Record<string, unknown> }>(`select data from webhook_event where company_id = $1 and event = 'campaign.sent' and data->>'campaignId' = $2`, [companyId, campaignId])).rows.map((r) => r.data);

    const cancelled = await dueCampaign(companyId, [list]);
    await store.start(companyId, cancelled);
    const [handed] = await store.waiting(companyId, cancelled, 1);
    await store.settle(companyId, handed?.id ?? "", "accepted", new Date());
    await store.changeState(companyId, cancelled, () => ({ state: "cancelled", audit: note("campaign.cancelled") }));
    const at = new Date("2030-04-01T12:00:00.000Z");
    const counters = { audience: 6, accepted: 1, failed: 0, unknown: 0, suppressed: 0, skipped: 5, waiting: 0 };
    expect(await store.finish(companyId, cancelled, at)).toEqual(counters);
    expect(await store.find(companyId, cancelled)).toMatchObject({ state: "cancelled", finishedAt: at, counters });
    expect(await store.countWaiting(companyId, cancelled)).toBe(0);
    expect(await events(cancelled)).toEqual([{ campaignId: cancelled, accepted: 1, failed: 0, suppressed: 0, skipped: 5, unknown: 0, occurredAt: at.toISOString() }]);
    // A repeated end keeps the first one's time and records nothing twice.
    expect(await store.finish(companyId, cancelled, new Date("2030-04-02T00:00:00.000Z"))).toEqual(counters);
    expect(await store.find(companyId, cancelled)).toMatchObject({ finishedAt: at });
    expect(await events(cancelled)).toHaveLength(1);

    // A sending campaign is sent; its recipients all settled.
    const sending = await dueCampaign(companyId, [list]);
    await store.start(companyId, sending);
    for (const recipient of await store.waiting(companyId, sending, 10)) await store.settle(companyId, recipient.id, "accepted", new Date());
    expect(await store.finish(companyId, sending, at)).toEqual({ ...counters, accepted: 5, skipped: 1 });
    expect(await store.find(companyId, sending)).toMatchObject({ state: "sent", finishedAt: at });
    expect(await events(sending)).toHaveLength(1);

    // A campaign cancelled before it started ends without recipients and without campaign.sent.
    const never = await newCampaign(companyId, [list]);
    await store.changeState(companyId, never.id, () => ({ state: "scheduled", sendAt: new Date(Date.now() + 60_000), audit: note("campaign.scheduled") }));
    await store.changeState(companyId, never.id, () => ({ state: "cancelled", finished: true, audit: note("campaign.cancelled") }));
    const finishedAt = async () => (await h.db.query<{ at: string }>(`select finished_at::text as at from campaign where id = $1`, [never.id])).rows[0]?.at;
    const ended = await finishedAt();
    expect(await store.finish(companyId, never.id, at)).toEqual({ audience: 0, accepted: 0, failed: 0, unknown: 0, suppressed: 0, skipped: 0, waiting: 0 });
    expect(await store.stateOf(companyId, never.id)).toBe("cancelled");
    // The end's own time, to the microsecond.
    expect(await finishedAt()).toBe(ended);
    expect(await events(never.id)).toEqual([]);
  });
});
