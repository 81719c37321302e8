import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresClickLedger, PostgresContactDirectory } from "../../../../src/adapters/postgres/conversions/index.ts";
import { lastVerifiedClickQuery } from "../../../../src/adapters/postgres/conversions/postgres-click-ledger.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import type { ValidClick } from "../../../../src/capabilities/conversions/index.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

const T = new Date("2026-01-10T00:00:00.000Z");
const at = (minutes: number) => new Date(T.getTime() + minutes * 60_000);

describe("PostgresClickLedger", () => {
  let h: SendingHarness;
  let ledger: PostgresClickLedger;

  beforeAll(async () => {
    h = await openSendingHarness();
    ledger = new PostgresClickLedger(h.orm);
  });
  afterAll(async () => h?.close());

  function click(extra: Partial<ValidClick>): ValidClick {
    return {
      clickId: randomUUID(),
      campaignId: "c",
      linkId: "l",
      recipientId: null,
      contactId: null,
      email: "ada@example.com",
      suspect: false,
      occurredAt: at(0),
      ...extra,
    };
  }

  it("keeps a click once per clickId", async () => {
    const companyId = await h.newCompany();
    const one = click({});
    expect(await ledger.record(companyId, one)).toBe(true);
    expect(await ledger.record(companyId, { ...one, campaignId: "other" })).toBe(false);
    const { rows } = await h.db.query(`select campaign_id from campaign_click where company_id = $1`, [companyId]);
    expect(rows).toEqual([{ campaign_id: "c" }]);
  });

  it("finds the latest verified click in (from, to], by contact id or address, within the company", async () => {
    const companyId = await h.newCompany();
    const contactId = randomUUID();
    await ledger.record(companyId, click({ campaignId: "by-email", email: "ada@example.com", occurredAt: at(10) }));
    await ledger.record(companyId, click({ campaignId: "by-id", contactId, email: null, occurredAt: at(20) }));
    await ledger.record(companyId, click({ campaignId: "suspect", contactId, suspect: true, occurredAt: at(30) }));
    await ledger.record(await h.newCompany("Other"), click({ campaignId: "foreign", contactId, occurredAt: at(25) }));

    const both = { contactId, email: "ada@example.com" };
    expect(await ledger.lastVerifiedClick(companyId, both, at(0), at(60))).toEqual({ campaignId: "by-id", linkId: "l", occurredAt: at(20) });
    expect(await ledger.lastVerifiedClick(companyId, { contactId: null, email: "ada@example.com" }, at(0), at(60))).toMatchObject({
      campaignId: "by-email",
    });
    expect(await ledger.lastVerifiedClick(companyId, { contactId, email: null }, at(0), at(60))).toMatchObject({ campaignId: "by-id" });
    // `to` is inclusive, `from` exclusive.
    expect(await ledger.lastVerifiedClick(companyId, both, at(0), at(19))).toMatchObject({ campaignId: "by-email" });
    expect(await ledger.lastVerifiedClick(companyId, both, at(0), at(10))).toMatchObject({ campaignId: "by-email" });
    expect(await ledger.lastVerifiedClick(companyId, both, at(10), at(19))).toBeUndefined();
    expect(await ledger.lastVerifiedClick(companyId, { contactId: null, email: null }, at(0), at(60))).toBeUndefined();
  });

  it("answers the lookup from its partial indexes (the plan, with sequential scans ruled out, scans only them)", async () => {
    const companyId = await h.newCompany();
    const pool = await poolOf(h.orm)();
    const client = await pool.connect();
    try {
      await client.query("set enable_seqscan = off");
      const query = lastVerifiedClickQuery(h.orm.em.fork(), companyId, { contactId: randomUUID(), email: "ada@example.com" }, at(0), at(60));
      const { rows } = await client.query<{ "QUERY PLAN": string }>(`explain ${query?.getFormattedQuery() ?? ""}`);
      const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(plan).toContain("campaign_click_contact_index");
      expect(plan).toContain("campaign_click_email_index");
      expect(plan).not.toMatch(/Seq Scan|Bitmap/);
      // Each branch stops at its first index row: no sort of the company's clicks (only of the two answers).
      expect(plan.match(/Limit[^\n]*\n\s*->\s+Index Scan using campaign_click_\w+_index/g)).toHaveLength(2);
    } finally {
      await client.query("reset enable_seqscan");
      client.release();
    }
  });
});

describe("PostgresContactDirectory", () => {
  let h: SendingHarness;
  let directory: PostgresContactDirectory;

  beforeAll(async () => {
    h = await openSendingHarness();
    directory = new PostgresContactDirectory(h.orm);
  });
  afterAll(async () => h?.close());

  it("finds a contact of the company by id or by its matching key; never another company's; none by customerRef", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany("Other");
    const { rows } = await h.db.query<{ id: string }>(
      `insert into contact (company_id, email, email_normalized, status) values ($1, 'Ann@Example.com', 'ann@example.com', 'pending') returning id`,
      [companyId],
    );
    const id = rows[0]?.id ?? "";
    expect(await directory.findContact(companyId, { kind: "contactId", contactId: id })).toEqual({ id, email: "ann@example.com" });
    expect(await directory.findContact(companyId, { kind: "email", email: "ann@example.com" })).toEqual({ id, email: "ann@example.com" });
    expect(await directory.findContact(other, { kind: "contactId", contactId: id })).toBeUndefined();
    expect(await directory.findContact(other, { kind: "email", email: "ann@example.com" })).toBeUndefined();
    expect(await directory.findContact(companyId, { kind: "customerRef", customerRef: "ann" })).toBeUndefined();
  });
});
