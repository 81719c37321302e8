import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrincipalActor } from "../../../src/capabilities/accounts/principal.ts";
import type { AuditContext } from "../../../src/capabilities/audit/types.ts";
import { expectApiError } from "../accounts/harness.ts";
import { openSendingHarness, type SendingHarness } from "../sending-setup/harness.ts";

const AUDIT: AuditContext = { actor: { kind: "member", label: "olive@shop.example" }, requestId: "req-1", clientIp: "203.0.113.9" };
const OWNER: PrincipalActor = { kind: "member", memberId: randomUUID(), email: "olive@shop.example", role: "owner", sessionId: randomUUID() };
const ADMIN: PrincipalActor = { ...OWNER, role: "admin" };
const KEY: PrincipalActor = { kind: "key" };
const OPERATOR: PrincipalActor = { kind: "operator" };

describe("suppressions", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await openSendingHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  const auditRows = async (companyId: string) =>
    (
      await h.db.query<{ action: string; target_id: string; actor: string; details: Record<string, unknown> }>(
        `select action, target_id, actor, details from audit_event where company_id = $1 order by occurred_at, id`,
        [companyId],
      )
    ).rows;

  it("suppresses an address case-insensitively, stored lower-cased", async () => {
    const companyId = await h.newCompany();
    const message = randomUUID();
    expect(await h.suppressions.isSuppressed({ companyId, email: "Bob@Example.COM" })).toBe(false);
    expect(await h.suppressions.suppress({ companyId, email: " Bob@Example.COM ", reason: "bounce", messageId: message })).toBe(true);
    for (const spelling of ["bob@example.com", "BOB@EXAMPLE.COM", "Bob@example.com"]) {
      expect(await h.suppressions.isSuppressed({ companyId, email: spelling })).toBe(true);
    }
    expect(await h.suppressions.isSuppressed({ companyId, email: "alice@example.com" })).toBe(false);
    const list = await h.suppressions.list({ companyId });
    expect(list).toEqual({ items: [{ email: "bob@example.com", reason: "bounce", messageId: message, createdAt: expect.any(Date) }], nextCursor: null });
    expect(await h.suppressions.get({ companyId, email: "BOB@example.com" })).toEqual(list.items[0]);
  });

  it("matches internationalised domains in either spelling", async () => {
    const companyId = await h.newCompany();
    await h.suppressions.suppress({ companyId, email: "kim@Bücher.example", reason: "complaint" });
    expect(await h.suppressions.isSuppressed({ companyId, email: "kim@xn--bcher-kva.example" })).toBe(true);
    expect((await h.suppressions.list({ companyId })).items[0]?.email).toBe("kim@xn--bcher-kva.example");
    expect((await h.suppressions.get({ companyId, email: "kim@bücher.example" })).reason).toBe("complaint");
  });

  it("is idempotent and keeps the first reason, whatever the spelling of later reports", async () => {
    const companyId = await h.newCompany();
    const first = randomUUID();
    expect(await h.suppressions.suppress({ companyId, email: "x@example.com", reason: "bounce", messageId: first })).toBe(true);
    expect(await h.suppressions.suppress({ companyId, email: "X@example.com", reason: "complaint", messageId: randomUUID() })).toBe(false);
    expect((await h.suppressions.list({ companyId })).items).toMatchObject([{ email: "x@example.com", reason: "bounce", messageId: first }]);
  });

  it("a manual addition is audited once; adding it again answers the entry as it is, and an address listed by a bounce keeps its reason", async () => {
    const companyId = await h.newCompany();
    const added = await h.suppressions.add({ companyId, email: "Manual@Example.com", audit: AUDIT });
    expect(added).toEqual({ created: true, suppression: { email: "manual@example.com", reason: "manual", messageId: null, createdAt: expect.any(Date) } });
    expect(await h.suppressions.add({ companyId, email: "manual@example.com", audit: AUDIT })).toEqual({ ...added, created: false });
    const bounced = randomUUID();
    await h.suppressions.suppress({ companyId, email: "bounced@example.com", reason: "bounce", messageId: bounced });
    expect(await h.suppressions.add({ companyId, email: "bounced@example.com", audit: AUDIT })).toMatchObject({
      created: false,
      suppression: { reason: "bounce", messageId: bounced },
    });
    expect(await auditRows(companyId)).toEqual([
      { action: "suppression.added", target_id: "manual@example.com", actor: "olive@shop.example", details: { email: "manual@example.com", reason: "manual" } },
    ]);
    await expectApiError(h.suppressions.add({ companyId, email: "no-at-sign", audit: AUDIT }), "VALIDATION_ERROR");
  });

  it("removes an address (any spelling) with a written reason, audited; then it is not listed and not suppressed", async () => {
    const companyId = await h.newCompany();
    await h.suppressions.suppress({ companyId, email: "gone@example.com", reason: "bounce", messageId: randomUUID() });
    const blank = await expectApiError(h.suppressions.remove({ companyId, email: "gone@example.com", reason: "  ", actor: ADMIN, audit: AUDIT }), "VALIDATION_ERROR");
    expect(blank.message).toMatch(/^reason: /);
    const removed = await h.suppressions.remove({ companyId, email: "GONE@example.com", reason: " mailbox fixed ", actor: ADMIN, audit: AUDIT });
    expect(removed).toMatchObject({ email: "gone@example.com", reason: "bounce" });
    expect(await h.suppressions.isSuppressed({ companyId, email: "gone@example.com" })).toBe(false);
    await expectApiError(h.suppressions.get({ companyId, email: "gone@example.com" }), "NOT_FOUND");
    await expectApiError(h.suppressions.remove({ companyId, email: "gone@example.com", reason: "again", actor: ADMIN, audit: AUDIT }), "NOT_FOUND");
    expect(await auditRows(companyId)).toEqual([
      {
        action: "suppression.removed",
        target_id: "gone@example.com",
        actor: "olive@shop.example",
        details: { email: "gone@example.com", suppressedFor: "bounce", reason: "mailbox fixed" },
      },
    ]);
    // The next bounce lists it again.
    expect(await h.suppressions.suppress({ companyId, email: "gone@example.com", reason: "bounce", messageId: randomUUID() })).toBe(true);
  });

  it("a complaint is removed by the owner role only (an owner's session, an operator); an admin or a key gets FORBIDDEN and nothing changes", async () => {
    const companyId = await h.newCompany();
    for (const email of ["a@example.com", "b@example.com"]) await h.suppressions.suppress({ companyId, email, reason: "complaint", messageId: randomUUID() });
    for (const actor of [ADMIN, KEY, { ...OWNER, role: "member" as const }]) {
      const refused = await expectApiError(h.suppressions.remove({ companyId, email: "a@example.com", reason: "asked", actor, audit: AUDIT }), "FORBIDDEN");
      expect(refused.message).toMatch(/Only an owner may remove a complaint/);
    }
    expect(await h.suppressions.isSuppressed({ companyId, email: "a@example.com" })).toBe(true);
    expect(await auditRows(companyId)).toEqual([]);
    expect((await h.suppressions.remove({ companyId, email: "a@example.com", reason: "asked", actor: OWNER, audit: AUDIT })).reason).toBe("complaint");
    expect((await h.suppressions.remove({ companyId, email: "b@example.com", reason: "asked", actor: OPERATOR, audit: AUDIT })).reason).toBe("complaint");
  });

  it("lists newest first with cursor pages, searched by part of the address, filtered by reason and time", async () => {
    const companyId = await h.newCompany();
    const emails = ["ann@shop.example", "ben@shop.example", "cat@other.example", "dan@shop.example", "eve@other.example"];
    for (const [index, email] of emails.entries()) {
      await h.suppressions.suppress({ companyId, email, reason: index % 2 === 0 ? "bounce" : "complaint", messageId: randomUUID() });
    }
    // Two of them at one instant: the address breaks the tie.
    await h.db.query(`update suppression set created_at = '2030-01-01T00:00:00Z' where company_id = $1 and email in ('ann@shop.example', 'ben@shop.example')`, [companyId]);
    await h.db.query(`update suppression set created_at = '2030-01-02T00:00:00Z' where company_id = $1 and email = 'cat@other.example'`, [companyId]);
    await h.db.query(`update suppression set created_at = '2030-01-03T00:00:00Z' where company_id = $1 and email in ('dan@shop.example', 'eve@other.example')`, [companyId]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.suppressions.list({ companyId, limit: 2, cursor });
      seen.push(...page.items.map((e) => e.email));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(["eve@other.example", "dan@shop.example", "cat@other.example", "ben@shop.example", "ann@shop.example"]);

    const emailsOf = async (query: Parameters<typeof h.suppressions.list>[0]) => (await h.suppressions.list(query)).items.map((e) => e.email);
    expect(await emailsOf({ companyId, q: "SHOP" })).toEqual(["dan@shop.example", "ben@shop.example", "ann@shop.example"]);
    expect(await emailsOf({ companyId, q: "%" })).toEqual([]);
    expect(await emailsOf({ companyId, reason: "complaint" })).toEqual(["dan@shop.example", "ben@shop.example"]);
    expect(await emailsOf({ companyId, since: new Date("2030-01-02T00:00:00Z"), until: new Date("2030-01-03T00:00:00Z") })).toEqual(["cat@other.example"]);
    expect(await emailsOf({ companyId, q: "shop", reason: "complaint", since: new Date("2030-01-01T00:00:01Z") })).toEqual(["dan@shop.example"]);

    const first = await h.suppressions.list({ companyId, limit: 1, q: "shop" });
    expect((await expectApiError(h.suppressions.list({ companyId, limit: 1, q: "other", cursor: first.nextCursor ?? "" }), "VALIDATION_ERROR")).message).toMatch(/^cursor: /);
    const until = await expectApiError(h.suppressions.list({ companyId, since: new Date("2030-01-02T00:00:00Z"), until: new Date("2030-01-01T00:00:00Z") }), "VALIDATION_ERROR");
    expect(until.message).toMatch(/^until: /);
    expect((await expectApiError(h.suppressions.list({ companyId, limit: 101 }), "VALIDATION_ERROR")).message).toMatch(/^limit: /);
  });

  it("validates reason, address and message id of the send path's suppressions", async () => {
    const companyId = await h.newCompany();
    await expectApiError(h.suppressions.suppress({ companyId, email: "a@example.com", reason: "spam" as "manual" }), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.suppress({ companyId, email: "no-at-sign", reason: "manual" }), "VALIDATION_ERROR");
    await expectApiError(h.suppressions.suppress({ companyId, email: "a@example.com", reason: "bounce", messageId: "m-1" }), "VALIDATION_ERROR");
  });

  it("tenant isolation: one company's list never affects another's", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    await h.suppressions.suppress({ companyId: a, email: "shared@example.com", reason: "bounce" });
    expect(await h.suppressions.isSuppressed({ companyId: b, email: "shared@example.com" })).toBe(false);
    expect((await h.suppressions.list({ companyId: b })).items).toEqual([]);
    await expectApiError(h.suppressions.get({ companyId: b, email: "shared@example.com" }), "NOT_FOUND");
    await expectApiError(h.suppressions.remove({ companyId: b, email: "shared@example.com", reason: "x", actor: OWNER, audit: AUDIT }), "NOT_FOUND");
    expect(await h.suppressions.add({ companyId: b, email: "shared@example.com", audit: AUDIT })).toMatchObject({ created: true, suppression: { reason: "manual" } });
    expect((await h.suppressions.get({ companyId: a, email: "shared@example.com" })).reason).toBe("bounce");
    // A's cursor means nothing to B.
    await h.suppressions.suppress({ companyId: a, email: "second@example.com", reason: "bounce" });
    const paged = await h.suppressions.list({ companyId: a, limit: 1 });
    await expectApiError(h.suppressions.list({ companyId: b, limit: 1, cursor: paged.nextCursor ?? "" }), "VALIDATION_ERROR");
  });
});
