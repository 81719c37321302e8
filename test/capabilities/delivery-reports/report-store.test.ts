import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDeliveryReportStore } from "../../../src/adapters/postgres/delivery-reports/report-store.ts";
import { type DeliveryReportStore, type KeptReport, REPORT_RETENTION_DAYS } from "../../../src/capabilities/delivery-reports/ports.ts";
import { openContactsHarness, type ContactsHarness } from "../contacts/harness.ts";

const DAY_MS = 24 * 3600 * 1000;

/**
 * The delivery report store on PostgreSQL: the lookups of the message a
 * report names, and the reports kept for operators (retention, filters,
 * order, limit).
 */
describe("the delivery report store (PostgreSQL)", () => {
  // A migrated database that makes companies: the contacts harness (its contacts capability goes unused).
  let h: ContactsHarness;
  let store: DeliveryReportStore;

  beforeAll(async () => {
    h = await openContactsHarness(4);
    store = postgresDeliveryReportStore(h.orm);
  });
  afterAll(async () => h?.close());

  async function newMessage(companyId: string, provider: string | null, providerMessageId: string | null): Promise<string> {
    const id = randomUUID();
    await h.db.query(
      `insert into message (id, company_id, recipient, recipient_domain, from_email, subject, status, provider, provider_message_id)
       values ($1, $2, 'to@example.com', 'example.com', 'News@Mail.Example.COM', 'Hi', 'sent', $3, $4)`,
      [id, companyId, provider, providerMessageId],
    );
    return id;
  }

  /** Empties the kept reports: each test lists from a clean table. */
  async function clear(): Promise<void> {
    await h.db.query("delete from delivery_report");
  }

  function report(overrides: Partial<KeptReport> = {}): KeptReport {
    return { source: "smtp", kind: "unmatched", reason: "no token", summary: { excerpt: "" }, receivedAt: new Date(), ...overrides };
  }

  it("finds the message a report names by id, whatever its company, and by provider id", async () => {
    const companyId = await h.newCompany();
    const providerMessageId = `ses-${randomUUID()}`;
    const id = await newMessage(companyId, "ses", providerMessageId);
    const expected = { companyId, messageId: id, provider: "ses", providerMessageId, sendingDomain: "mail.example.com" };
    expect(await store.messageById(id)).toEqual(expected);
    expect(await store.messageById(id.toUpperCase())).toEqual(expected);
    expect(await store.messageByProviderId("ses", providerMessageId)).toEqual(expected);

    const notHandedOver = await newMessage(companyId, null, null);
    expect(await store.messageById(notHandedOver)).toEqual({ companyId, messageId: notHandedOver, provider: null, providerMessageId: null, sendingDomain: "mail.example.com" });
  });

  it("answers undefined for an unknown message or an id that is no UUID", async () => {
    expect(await store.messageById(randomUUID())).toBeUndefined();
    expect(await store.messageById("not-a-uuid")).toBeUndefined();
    expect(await store.messageByProviderId("ses", "unknown")).toBeUndefined();
    expect(await store.messageByProviderId("smtp", "")).toBeUndefined();
  });

  it("keeps a report for the retention period, with what an operator sees of it", async () => {
    await clear();
    const companyId = await h.newCompany();
    const messageId = await newMessage(companyId, null, null);
    const receivedAt = new Date(Date.now() - 1000);
    await store.keep(report({ kind: "delayed", reason: "x".repeat(600), companyId, messageId, summary: { from: "MAILER-DAEMON", subject: "Delayed", excerpt: "will retry" }, receivedAt }));
    await store.keep(report({ receivedAt: new Date(receivedAt.getTime() - 1000) }));
    const [kept, bare, ...others] = await store.list({ limit: 50 });
    expect(others).toEqual([]);
    expect(kept).toEqual({
      id: expect.any(String),
      source: "smtp",
      kind: "delayed",
      reason: "x".repeat(500),
      companyId,
      messageId,
      summary: { from: "MAILER-DAEMON", subject: "Delayed", excerpt: "will retry" },
      receivedAt,
      expiresAt: new Date(receivedAt.getTime() + REPORT_RETENTION_DAYS * DAY_MS),
    });
    // Absent parts stay absent (no nulls, no empty strings).
    expect(bare).toEqual({ id: expect.any(String), source: "smtp", kind: "unmatched", reason: "no token", summary: { excerpt: "" }, receivedAt: expect.any(Date), expiresAt: expect.any(Date) });
  });

  it("drops expired reports when it keeps one, and never lists them", async () => {
    await clear();
    const expired = new Date(Date.now() - (REPORT_RETENTION_DAYS + 1) * DAY_MS);
    await store.keep(report({ reason: "old", receivedAt: expired }));
    expect(await store.list({ limit: 50 })).toEqual([]);
    expect((await h.db.query("select reason from delivery_report")).rows).toEqual([{ reason: "old" }]);
    await store.keep(report({ reason: "new" }));
    expect((await h.db.query("select reason from delivery_report")).rows).toEqual([{ reason: "new" }]);
  });

  it("lists newest first (ties by id), of one company and of one kind when asked", async () => {
    await clear();
    const mine = await h.newCompany();
    const theirs = await h.newCompany();
    const at = new Date(Date.now() - 60_000);
    const later = new Date(at.getTime() + 1000);
    await store.keep(report({ reason: "mine, delayed", kind: "delayed", companyId: mine, receivedAt: at }));
    await store.keep(report({ reason: "mine, soft bounce", kind: "soft_bounce", companyId: mine, receivedAt: at }));
    await store.keep(report({ reason: "mine, later", companyId: mine, receivedAt: later }));
    await store.keep(report({ reason: "theirs", companyId: theirs, receivedAt: later }));
    await store.keep(report({ reason: "nobody's", receivedAt: at }));

    const all = await store.list({ limit: 50 });
    expect(all.map((r) => r.receivedAt.getTime())).toEqual([later, later, at, at, at].map((d) => d.getTime()));
    const ties = all.filter((r) => r.receivedAt.getTime() === at.getTime()).map((r) => r.id);
    expect(ties).toEqual([...ties].sort());

    const ofMine = await store.list({ limit: 50, companyId: mine });
    expect(ofMine.map((r) => r.reason)).toEqual(["mine, later", ...all.filter((r) => r.companyId === mine && r.receivedAt.getTime() === at.getTime()).map((r) => r.reason)]);
    expect(ofMine.every((r) => r.companyId === mine)).toBe(true);
    expect((await store.list({ limit: 50, companyId: mine, kind: "soft_bounce" })).map((r) => r.reason)).toEqual(["mine, soft bounce"]);
    expect((await store.list({ limit: 50, kind: "unmatched" })).map((r) => r.reason).sort()).toEqual(["mine, later", "nobody's", "theirs"]);
    expect(await store.list({ limit: 50, companyId: await h.newCompany() })).toEqual([]);
  });

  it("answers at least one and at most 500 reports", async () => {
    await clear();
    await h.db.query(
      `insert into delivery_report (id, source, kind, reason, excerpt, received_at, expires_at)
       select gen_random_uuid(), 'smtp', 'unmatched', 'bulk ' || n, '', now() - n * interval '1 second', now() + interval '1 day'
         from generate_series(1, 501) as n`,
    );
    expect((await store.list({ limit: 0 })).map((r) => r.reason)).toEqual(["bulk 1"]);
    expect(await store.list({ limit: 3 })).toHaveLength(3);
    const capped = await store.list({ limit: 10_000 });
    expect(capped).toHaveLength(500);
    expect(capped.at(-1)?.reason).toBe("bulk 500");
  });
});
