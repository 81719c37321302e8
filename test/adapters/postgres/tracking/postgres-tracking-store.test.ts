import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresTrackingStore } from "../../../../src/adapters/postgres/tracking/index.ts";
import { type FirstEngagement, HONEYPOT_LINK_ID, type TrackedRecipient, type TrackingHit } from "../../../../src/capabilities/tracking/index.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

const T = new Date("2026-03-01T10:00:00.000Z");
const at = (minutes: number) => new Date(T.getTime() + minutes * 60_000);
const ZERO = { uniqueOpens: 0, opens: 0, machineOpens: 0, clicks: 0, suspectClicks: 0, uniqueClicks: 0, unsubscribes: 0 };

describe("PostgresTrackingStore", () => {
  let h: SendingHarness;
  let store: PostgresTrackingStore;

  beforeAll(async () => {
    h = await openSendingHarness();
    store = new PostgresTrackingStore(h.orm);
  });
  afterAll(async () => h?.close());

  function recipient(companyId: string, extra: Partial<TrackedRecipient> = {}): TrackedRecipient {
    return { companyId, campaignId: "spring", recipientId: randomUUID(), contactId: randomUUID(), email: "ada@example.com", language: "en", ...extra };
  }

  function hit(copy: TrackedRecipient, extra: Partial<TrackingHit>): TrackingHit {
    return {
      id: randomUUID(),
      companyId: copy.companyId,
      campaignId: copy.campaignId,
      recipientId: copy.recipientId,
      kind: "click",
      linkId: "l1",
      suspect: false,
      reasons: [],
      at: at(0),
      ...extra,
    };
  }

  function first(copy: TrackedRecipient, extra: Partial<FirstEngagement>): FirstEngagement {
    return { companyId: copy.companyId, campaignId: copy.campaignId, recipientId: copy.recipientId, kind: "open", linkId: null, at: at(0), ...extra };
  }

  it("registers a copy and its links once: a copy decorated again and a link met again keep their first rows", async () => {
    const companyId = await h.newCompany();
    const copy = recipient(companyId, { language: null });
    await store.registerCopy(copy, [
      { linkId: "l2", url: "https://shop.example/b" },
      { linkId: "l1", url: "https://shop.example/a" },
    ]);
    expect(await store.findRecipient(copy.recipientId)).toEqual(copy);
    expect(await store.linkUrl(companyId, "spring", "l1")).toBe("https://shop.example/a");
    expect(await store.linkUrl(companyId, "spring", "l2")).toBe("https://shop.example/b");

    await store.registerCopy({ ...copy, email: "other@example.com" }, [{ linkId: "l1", url: "https://shop.example/changed" }]);
    const other = recipient(companyId);
    await store.registerCopy(other, [
      { linkId: "l1", url: "https://shop.example/changed" },
      { linkId: "l3", url: "https://shop.example/c" },
    ]);
    expect(await store.findRecipient(copy.recipientId)).toEqual(copy);
    expect(await store.findRecipient(other.recipientId)).toEqual(other);
    expect(await store.linkUrl(companyId, "spring", "l1")).toBe("https://shop.example/a");
    expect(await store.linkUrl(companyId, "spring", "l3")).toBe("https://shop.example/c");
    expect(await store.linkUrl(companyId, "spring", "missing")).toBeUndefined();
    expect(await store.linkUrl(companyId, "autumn", "l1")).toBeUndefined();

    // A copy without links registers the copy alone.
    const plain = recipient(companyId, { campaignId: "plain" });
    await store.registerCopy(plain, []);
    expect(await store.findRecipient(plain.recipientId)).toEqual(plain);
    expect(await store.findRecipient(randomUUID())).toBeUndefined();
    expect(await store.findRecipient("not-a-uuid")).toBeUndefined();
  });

  it("copies of one campaign registered concurrently all succeed and leave one row per link", async () => {
    const companyId = await h.newCompany();
    const links = Array.from({ length: 6 }, (_, i) => ({ linkId: `k${i}`, url: `https://shop.example/${i}` }));
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.registerCopy(recipient(companyId), i % 2 === 0 ? links : [...links].reverse())),
    );
    const { rows } = await h.db.query(`select link_id from tracking_link where company_id = $1 order by link_id`, [companyId]);
    expect(rows.map((row) => row.link_id)).toEqual(links.map((link) => link.linkId));
  });

  it("records a first engagement exactly once per recipient, kind and link, also when 8 calls race", async () => {
    const companyId = await h.newCompany();
    const copy = recipient(companyId);
    const opened = await Promise.all(Array.from({ length: 8 }, (_, i) => store.recordFirst(first(copy, { kind: "open", at: at(i) }))));
    expect(opened.filter(Boolean)).toHaveLength(1);
    const clicked = await Promise.all(Array.from({ length: 8 }, () => store.recordFirst(first(copy, { kind: "click", linkId: "l1" }))));
    expect(clicked.filter(Boolean)).toHaveLength(1);
    // Another link, another kind: firsts of their own.
    expect(await store.recordFirst(first(copy, { kind: "click", linkId: "l2" }))).toBe(true);
    expect(await store.recordFirst(first(copy, { kind: "unsubscribe" }))).toBe(true);
    expect(await store.recordFirst(first(copy, { kind: "unsubscribe" }))).toBe(false);
    const { rows } = await h.db.query(`select kind, link_id from tracking_first where company_id = $1 order by kind, link_id`, [companyId]);
    expect(rows).toEqual([
      { kind: "click", link_id: "l1" },
      { kind: "click", link_id: "l2" },
      { kind: "open", link_id: "" },
      { kind: "unsubscribe", link_id: "" },
    ]);
  });

  it("answers a recipient's clicks at or after a time, newest first, and no opens", async () => {
    const companyId = await h.newCompany();
    const copy = recipient(companyId);
    const other = recipient(companyId);
    await store.recordHit(hit(copy, { linkId: "l1", at: at(1) }));
    await store.recordHit(hit(copy, { linkId: "l2", at: at(3), suspect: true, reasons: ["burst", "honeypot"] }));
    await store.recordHit(hit(copy, { linkId: "l3", at: at(-5) }));
    await store.recordHit(hit(copy, { kind: "open", linkId: null, at: at(2) }));
    await store.recordHit(hit(other, { linkId: "l1", at: at(2) }));
    expect(await store.recentClicks(companyId, copy.recipientId, at(0))).toEqual([
      { linkId: "l2", at: at(3) },
      { linkId: "l1", at: at(1) },
    ]);
    expect(await store.recentClicks(companyId, copy.recipientId, at(1))).toEqual([
      { linkId: "l2", at: at(3) },
      { linkId: "l1", at: at(1) },
    ]);
    const { rows } = await h.db.query(`select reasons from tracking_hit where company_id = $1 and suspect`, [companyId]);
    expect(rows).toEqual([{ reasons: "burst,honeypot" }]);
  });

  it("counts a campaign's engagement, per link and per hour or day, leaving out the honeypot and other campaigns", async () => {
    const companyId = await h.newCompany();
    const links = [
      { linkId: "l1", url: "https://shop.example/a" },
      { linkId: "l2", url: "https://shop.example/b" },
      { linkId: "l3", url: "https://shop.example/never" },
    ];
    const ada = recipient(companyId);
    const bob = recipient(companyId, { email: "bob@example.com" });
    await store.registerCopy(ada, links);
    await store.registerCopy(bob, links);
    // Opens: two human, one a machine's.
    await store.recordHit(hit(ada, { kind: "open", linkId: null, at: at(5) }));
    await store.recordHit(hit(bob, { kind: "open", linkId: null, at: at(70) }));
    await store.recordHit(hit(bob, { kind: "open", linkId: null, suspect: true, at: at(1) }));
    // Clicks: l1 twice verified and once suspect, l2 once, the honeypot once.
    await store.recordHit(hit(ada, { linkId: "l1", at: at(10) }));
    await store.recordHit(hit(bob, { linkId: "l1", at: at(75) }));
    await store.recordHit(hit(bob, { linkId: "l1", suspect: true, at: at(76) }));
    await store.recordHit(hit(ada, { linkId: "l2", at: at(24 * 60 + 5) }));
    await store.recordHit(hit(ada, { linkId: HONEYPOT_LINK_ID, suspect: true, at: at(11) }));
    await store.recordFirst(first(ada, { kind: "open" }));
    await store.recordFirst(first(bob, { kind: "open" }));
    await store.recordFirst(first(ada, { kind: "click", linkId: "l1" }));
    await store.recordFirst(first(ada, { kind: "click", linkId: "l2" }));
    await store.recordFirst(first(bob, { kind: "click", linkId: "l1" }));
    await store.recordFirst(first(bob, { kind: "unsubscribe" }));
    // Another campaign of the company: counted on its own.
    const elsewhere = recipient(companyId, { campaignId: "autumn" });
    await store.registerCopy(elsewhere, links);
    await store.recordHit(hit(elsewhere, { linkId: "l1", at: at(10) }));
    await store.recordFirst(first(elsewhere, { kind: "click", linkId: "l1" }));

    expect(await store.countsFor(companyId, "spring")).toEqual({
      uniqueOpens: 2,
      opens: 3,
      machineOpens: 1,
      clicks: 4,
      suspectClicks: 1,
      uniqueClicks: 2,
      unsubscribes: 1,
    });
    expect(await store.clicksPerLink(companyId, "spring")).toEqual([
      { linkId: "l1", url: "https://shop.example/a", clicks: 3, suspectClicks: 1, uniqueClicks: 2 },
      { linkId: "l2", url: "https://shop.example/b", clicks: 1, suspectClicks: 0, uniqueClicks: 1 },
      { linkId: "l3", url: "https://shop.example/never", clicks: 0, suspectClicks: 0, uniqueClicks: 0 },
    ]);
    expect(await store.timeline(companyId, "spring", "hour")).toEqual([
      { start: new Date("2026-03-01T10:00:00.000Z"), opens: 1, clicks: 1 },
      { start: new Date("2026-03-01T11:00:00.000Z"), opens: 1, clicks: 1 },
      { start: new Date("2026-03-02T10:00:00.000Z"), opens: 0, clicks: 1 },
    ]);
    expect(await store.timeline(companyId, "spring", "day")).toEqual([
      { start: new Date("2026-03-01T00:00:00.000Z"), opens: 2, clicks: 2 },
      { start: new Date("2026-03-02T00:00:00.000Z"), opens: 0, clicks: 1 },
    ]);
    expect(await store.countsFor(companyId, "autumn")).toEqual({ ...ZERO, clicks: 1, uniqueClicks: 1 });
    expect(await store.countsFor(companyId, "none")).toEqual(ZERO);
    expect(await store.clicksPerLink(companyId, "none")).toEqual([]);
    expect(await store.timeline(companyId, "none", "day")).toEqual([]);
  });

  it("tenant isolation: every statement but the recipient lookup is scoped to the company; ids that cannot be row ids find nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const copy = recipient(a);
    await store.registerCopy(copy, [{ linkId: "l1", url: "https://a.example/" }]);
    await store.recordHit(hit(copy, { linkId: "l1", at: at(1) }));
    await store.recordHit(hit(copy, { kind: "open", linkId: null, at: at(2) }));
    expect(await store.recordFirst(first(copy, { kind: "open" }))).toBe(true);

    // B's link of the same campaign id and link id is its own.
    await store.registerCopy(recipient(b), [{ linkId: "l1", url: "https://b.example/" }]);
    expect(await store.linkUrl(a, "spring", "l1")).toBe("https://a.example/");
    expect(await store.linkUrl(b, "spring", "l1")).toBe("https://b.example/");
    expect(await store.recentClicks(b, copy.recipientId, at(0))).toEqual([]);
    expect(await store.countsFor(b, "spring")).toEqual(ZERO);
    expect(await store.clicksPerLink(b, "spring")).toEqual([{ linkId: "l1", url: "https://b.example/", clicks: 0, suspectClicks: 0, uniqueClicks: 0 }]);
    expect(await store.timeline(b, "spring", "hour")).toEqual([]);
    // A's first open is A's: B's (the same recipient id, which only a forged token would name) is a first of its own.
    expect(await store.recordFirst(first(copy, { companyId: b, kind: "open" }))).toBe(true);
    expect(await store.countsFor(a, "spring")).toMatchObject({ uniqueOpens: 1, opens: 1, clicks: 1 });
    // The recipient lookup reads by the token's recipient id alone, and answers the row's own company.
    expect(await store.findRecipient(copy.recipientId)).toMatchObject({ companyId: a });

    for (const id of ["not-a-uuid", ""]) {
      expect(await store.linkUrl(id, "spring", "l1")).toBeUndefined();
      expect(await store.recentClicks(id, copy.recipientId, at(0))).toEqual([]);
      expect(await store.countsFor(id, "spring")).toEqual(ZERO);
      expect(await store.clicksPerLink(id, "spring")).toEqual([]);
      expect(await store.timeline(id, "spring", "day")).toEqual([]);
    }
    expect(await store.recentClicks(a, "not-a-uuid", at(0))).toEqual([]);
  });
});
