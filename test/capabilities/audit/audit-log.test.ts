import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/contract/api-error.ts";
import { AUDIT_RETENTION_DAYS, AuditLog } from "../../../src/capabilities/audit/audit-log.ts";
import type { AuditFilters, AuditLogStore } from "../../../src/capabilities/audit/ports.ts";
import type { AuditEventRecord } from "../../../src/capabilities/audit/types.ts";
import type { KeysetPosition } from "../../../src/capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../src/capabilities/shared/paging.ts";

/**
 * Reading the audit log and its retention, over an in-memory store that
 * filters and pages as the PostgreSQL one does. What gets recorded is
 * walked over HTTP in test/api/audit.test.ts; these pin the use case's own
 * rules: which filters a cursor is bound to, and where retention cuts.
 */

const COMPANY = "0f8fad5b-d9cb-469f-a165-70867728950e";
const OTHER_COMPANY = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
const NOW = new Date("2025-06-30T12:00:00.000Z");
const DAY_MS = 86_400_000;

function event(n: number, companyId: string, action: string, actor: string, occurredAt: Date): Positioned<AuditEventRecord> {
  const id = `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
  return {
    item: { id, companyId, occurredAt, actorKind: "member", actor, action, targetType: "member", targetId: `t-${n}`, requestId: `r-${n}`, clientIp: "", details: {} },
    position: { createdAt: `${occurredAt.toISOString().slice(0, 23)}000Z`, id },
  };
}

/** The store's contract in memory: one company, filters, newest first, strictly after a position. */
class MemoryAuditLog implements AuditLogStore {
  readonly rows: Positioned<AuditEventRecord>[] = [];
  readonly lists: { filters: AuditFilters; after: KeysetPosition | null; limit: number }[] = [];
  cutoffs: Date[] = [];

  async list(companyId: string, filters: AuditFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<AuditEventRecord>[]> {
    this.lists.push({ filters, after, limit });
    const before = (p: KeysetPosition, q: KeysetPosition) => p.createdAt < q.createdAt || (p.createdAt === q.createdAt && p.id < q.id);
    return this.rows
      .filter(({ item }) => item.companyId === companyId)
      .filter(({ item }) => filters.actor === undefined || item.actor === filters.actor)
      .filter(({ item }) => filters.action === undefined || item.action === filters.action)
      .filter(({ item }) => filters.since === undefined || item.occurredAt >= filters.since)
      .filter(({ position }) => after === null || before(position, after))
      .sort((a, b) => (before(a.position, b.position) ? 1 : -1))
      .slice(0, limit);
  }

  async deleteOlderThan(cutoff: Date): Promise<number> {
    this.cutoffs.push(cutoff);
    const keep = this.rows.filter(({ item }) => item.occurredAt >= cutoff);
    const deleted = this.rows.length - keep.length;
    this.rows.splice(0, this.rows.length, ...keep);
    return deleted;
  }
}

function auditLog(store: AuditLogStore, clock: () => Date = () => NOW): AuditLog {
  return new AuditLog({ store, cursorSecret: "test-cursor-secret", clock });
}

async function problems(promise: Promise<unknown>): Promise<string[]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fields.map((f) => `${f.field}: ${f.problem}`);
}

describe("the audit log", () => {
  function seeded(): MemoryAuditLog {
    const store = new MemoryAuditLog();
    for (let n = 0; n < 6; n++) {
      store.rows.push(event(n, COMPANY, n % 2 === 0 ? "api_key.created" : "member.invited", n < 3 ? "ada@shop.example" : "bob@shop.example", new Date(NOW.getTime() - (6 - n) * 60_000)));
    }
    store.rows.push(event(99, OTHER_COMPANY, "api_key.created", "ada@shop.example", new Date(NOW.getTime() - 30_000)));
    return store;
  }

  it("pages newest first through the company's events with the filters as given", async () => {
    const store = seeded();
    const log = auditLog(store);
    const first = await log.list({ companyId: COMPANY, filters: { action: "api_key.created" }, limit: 2 });
    expect(first.items.map((e) => e.targetId)).toEqual(["t-4", "t-2"]);
    const second = await log.list({ companyId: COMPANY, filters: { action: "api_key.created" }, limit: 2, cursor: first.nextCursor ?? "" });
    expect(second.items.map((e) => e.targetId)).toEqual(["t-0"]);
    expect(second.nextCursor).toBeNull();
    expect(store.lists.map((l) => [l.filters, l.limit])).toEqual([
      [{ action: "api_key.created" }, 3],
      [{ action: "api_key.created" }, 3],
    ]);
  });

  it("binds a cursor to actor, action and since, naming them when one changes", async () => {
    const log = auditLog(seeded());
    const since = new Date(NOW.getTime() - 3_600_000);
    const filters = { actor: "ada@shop.example", since };
    const first = await log.list({ companyId: COMPANY, filters, limit: 1 });
    const cursor = first.nextCursor ?? "";
    expect(cursor).not.toBe("");
    // The same filters, with `since` as another Date of the same instant: the next page.
    const next = await log.list({ companyId: COMPANY, filters: { actor: "ada@shop.example", since: new Date(since.getTime()) }, limit: 1, cursor });
    expect(next.items).toHaveLength(1);
    const otherFilters = [
      { actor: "bob@shop.example", since },
      { actor: "ada@shop.example" },
      { actor: "ada@shop.example", since: new Date(since.getTime() + 1) },
      { actor: "ada@shop.example", since, action: "member.invited" },
    ];
    for (const other of otherFilters) {
      expect(await problems(log.list({ companyId: COMPANY, filters: other, limit: 1, cursor }))).toEqual([
        "cursor: was issued for other filters; send the same actor, action and since as on the first page",
      ]);
    }
    expect(await problems(log.list({ companyId: OTHER_COMPANY, filters, limit: 1, cursor }))).toEqual(["cursor: is not a valid cursor; pass nextCursor back unchanged"]);
  });

  it("refuses a limit outside 1 to 100 before reading the log", async () => {
    const store = seeded();
    expect(await problems(auditLog(store).list({ companyId: COMPANY, filters: {}, limit: 101 }))).toEqual(["limit: must be an integer from 1 to 100"]);
    expect(store.lists).toEqual([]);
  });

  it(`keeps ${AUDIT_RETENTION_DAYS} days: the retention deletes what is older than exactly that, by the log's clock`, async () => {
    const store = new MemoryAuditLog();
    const cutoff = new Date(NOW.getTime() - 400 * DAY_MS);
    store.rows.push(
      event(1, COMPANY, "member.invited", "ada@shop.example", new Date(cutoff.getTime() - 1)),
      event(2, COMPANY, "member.invited", "ada@shop.example", cutoff),
      event(3, OTHER_COMPANY, "member.invited", "ada@shop.example", new Date(cutoff.getTime() - DAY_MS)),
      event(4, COMPANY, "member.invited", "ada@shop.example", new Date(NOW.getTime() - 399 * DAY_MS)),
    );
    expect(await auditLog(store).purgeExpired()).toBe(2);
    expect(store.cutoffs).toEqual([cutoff]);
    expect(store.rows.map((r) => r.item.targetId)).toEqual(["t-2", "t-4"]);

    // A day later by the clock, a day more goes.
    const later = new Date(NOW.getTime() + DAY_MS);
    await auditLog(store, () => later).purgeExpired();
    expect(store.cutoffs.at(-1)).toEqual(new Date(cutoff.getTime() + DAY_MS));
    expect(store.rows.map((r) => r.item.targetId)).toEqual(["t-4"]);
  });
});
