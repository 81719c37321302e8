import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresMembersStore } from "../../../../src/adapters/postgres/members/postgres-members-store.ts";
import type { AuditNote } from "../../../../src/capabilities/audit/types.ts";
import type { MemberPatch } from "../../../../src/capabilities/members/ports.ts";
import type { MemberRecord, MemberRole } from "../../../../src/capabilities/members/types.ts";
import { type Harness, openHarness } from "../../../capabilities/accounts/harness.ts";

const NOTE: AuditNote = {
  context: { actor: { kind: "operator", label: "operator" }, requestId: "req", clientIp: "" },
  action: "member.updated",
  details: {},
};

const MINUTE = 60_000;
const IDLE_MS = 30 * MINUTE;
const TOUCH_AFTER_MS = 5 * MINUTE;

/** The capability's rule, written out: the last active owner stays an owner. */
function demoteUnlessLast(current: MemberRecord, activeOwners: number): MemberPatch {
  if (current.role === "owner" && activeOwners <= 1) throw new Error("last owner");
  return { role: "admin" };
}

function removeUnlessLast(current: MemberRecord, activeOwners: number): void {
  if (current.role === "owner" && activeOwners <= 1) throw new Error("last owner");
}

/**
 * The members store on PostgreSQL: tenant isolation, ids that are no UUID,
 * and its concurrency guarantees (the owner lock, single-use links, the
 * email slot, the session's touch), each raced for real.
 */
describe("PostgresMembersStore", () => {
  let h: Harness;
  let store: PostgresMembersStore;

  beforeAll(async () => {
    h = await openHarness();
    store = new PostgresMembersStore(h.orm);
  });
  afterAll(async () => h?.close());

  const newCompany = async (): Promise<string> => (await h.accounts.companies.create({ name: `Co ${randomUUID().slice(0, 8)}` })).id;
  const newMember = async (companyId: string, role: MemberRole = "member", email = `${randomUUID()}@members.example`): Promise<MemberRecord> =>
    (await store.insertOrFind(companyId, { email, displayName: "", role }, { ...NOTE, action: "member.invited" })).member;
  const owners = async (companyId: string): Promise<string[]> =>
    (await store.list(companyId, null, 100)).filter(({ item }) => item.role === "owner" && !item.disabled).map(({ item }) => item.id);
  const audited = async (companyId: string): Promise<string[]> =>
    (await h.db.query<{ action: string }>(`select action from audit_event where company_id = $1 order by occurred_at, id`, [companyId])).rows.map((r) => r.action);
  const sessionRows = async (memberId: string): Promise<number> =>
    (await h.db.query(`select 1 from member_session where member_id = $1`, [memberId])).rowCount ?? 0;
  const lastSeen = async (sessionId: string): Promise<Date | undefined> =>
    (await h.db.query<{ last_seen_at: Date }>(`select last_seen_at from member_session where id = $1`, [sessionId])).rows[0]?.last_seen_at;

  /** Resolves once `count` connections to the test database wait for a lock (row locks included). */
  async function waitingForLocks(count: number): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const waiting = await h.db.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      if ((waiting.rowCount ?? 0) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`fewer than ${count} connections waited for a lock`);
  }

  /**
   * Runs `during` while another connection holds a lock that stops every
   * audit row insert: a store change that reaches its audit row waits there,
   * inside its transaction, with the locks it took before.
   */
  async function withAuditRowsHeld(during: () => Promise<void>): Promise<void> {
    const holder = new pg.Client({ connectionString: h.db.url });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("lock table audit_event in share mode");
      await during();
    } finally {
      await holder.query("commit").catch(() => undefined);
      await holder.end();
    }
  }

  /** A link for the member, and its token's hash. */
  async function newLink(companyId: string, memberId: string, expiresAt: Date): Promise<Buffer> {
    const tokenHash = randomBytes(32);
    await store.createLink(companyId, memberId, { tokenHash, expiresAt }, undefined);
    return tokenHash;
  }

  /** A session opened at `now` through a new link; its secret's hash and id. */
  async function openSession(companyId: string, memberId: string, now: Date, expiresAt = new Date(now.getTime() + 12 * 60 * MINUTE)) {
    const link = await newLink(companyId, memberId, new Date(now.getTime() + 15 * MINUTE));
    const secretHash = randomBytes(32);
    const session = await store.exchangeLink(link, now, { secretHash, expiresAt });
    if (!session) throw new Error("the link opened no session");
    return { secretHash, session };
  }

  it("adds a member once with its audit row, finds it by id and address, and pages the company's members", async () => {
    const companyId = await newCompany();
    const invited = { ...NOTE, action: "member.invited" as const };
    const first = await store.insertOrFind(companyId, { email: "ann@members.example", displayName: "Ann", role: "owner" }, invited);
    expect(first).toEqual({
      created: true,
      member: {
        id: expect.any(String),
        companyId,
        email: "ann@members.example",
        displayName: "Ann",
        role: "owner",
        disabled: false,
        createdAt: expect.any(Date),
        lastSignInAt: null,
      },
    });
    // The same address again: the stored member, unchanged, and no second audit row.
    expect(await store.insertOrFind(companyId, { email: "ann@members.example", displayName: "Other", role: "member" }, invited)).toEqual({
      created: false,
      member: first.member,
    });
    expect(await audited(companyId)).toEqual(["member.invited"]);
    expect(await store.find(companyId, first.member.id)).toEqual(first.member);
    expect(await store.findByEmail(companyId, "ann@members.example")).toEqual(first.member);
    expect(await store.findByEmail(companyId, "nobody@members.example")).toBeNull();

    // Concurrent invites of one address: one creates it.
    const raced = await Promise.all(Array.from({ length: 6 }, () => store.insertOrFind(companyId, { email: "race@members.example", displayName: "", role: "member" }, invited)));
    expect(raced.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(raced.map((r) => r.member.id)).size).toBe(1);

    const more = [await newMember(companyId), await newMember(companyId)];
    const all = [first.member.id, raced[0]?.member.id, ...more.map((m) => m.id)];
    const page = await store.list(companyId, null, 2);
    expect(page.map((p) => p.item.id)).toEqual(all.slice(0, 2));
    // Positions keep microseconds: the next page starts right after the last row.
    expect(page[1]?.position.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const next = await store.list(companyId, page[1]?.position ?? null, 2);
    expect(next.map((p) => p.item.id)).toEqual(all.slice(2));
    expect(await store.list(companyId, next[1]?.position ?? null, 2)).toEqual([]);
  });

  it("of two concurrent demotions of the last two owners, the second waits for the first and is refused", async () => {
    const companyId = await newCompany();
    const a = await newMember(companyId, "owner");
    const b = await newMember(companyId, "owner");
    const seen: number[] = [];
    let first: Promise<MemberRecord | null> = Promise.resolve(null);
    let second: Promise<MemberRecord | null> = Promise.resolve(null);
    await withAuditRowsHeld(async () => {
      // The first has decided and changed its member, and waits at its audit row holding the owners' lock...
      first = store.update(companyId, a.id, demoteUnlessLast, NOTE);
      await waitingForLocks(1);
      // ...so the second waits for that lock before it decides.
      second = store.update(
        companyId,
        b.id,
        (current, activeOwners) => {
          seen.push(activeOwners);
          return demoteUnlessLast(current, activeOwners);
        },
        NOTE,
      );
      await waitingForLocks(2);
      expect(seen).toEqual([]);
    });
    const [demoted, refused] = await Promise.allSettled([first, second]);
    expect(demoted).toMatchObject({ status: "fulfilled", value: { id: a.id, role: "admin" } });
    expect(refused.status === "rejected" && refused.reason instanceof Error && refused.reason.message).toBe("last owner");
    // The second decided on the first's result: one active owner.
    expect(seen).toEqual([1]);
    expect(await owners(companyId)).toEqual([b.id]);
  });

  it("a removal racing a demotion of the other owner, and removals racing each other, leave one owner", async () => {
    const companyId = await newCompany();
    const a = await newMember(companyId, "owner");
    const b = await newMember(companyId, "owner");
    let demotion: Promise<MemberRecord | null> = Promise.resolve(null);
    let removal: Promise<MemberRecord | null> = Promise.resolve(null);
    await withAuditRowsHeld(async () => {
      demotion = store.update(companyId, a.id, demoteUnlessLast, NOTE);
      await waitingForLocks(1);
      removal = store.remove(companyId, b.id, removeUnlessLast, { ...NOTE, action: "member.removed" });
      await waitingForLocks(2);
    });
    const outcomes = await Promise.allSettled([demotion, removal]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected"]);
    expect(await owners(companyId)).toEqual([b.id]);

    // Three owners removed at once: two go, one stays.
    const other = await newCompany();
    const trio = [await newMember(other, "owner"), await newMember(other, "owner"), await newMember(other, "owner")];
    const removed = await Promise.allSettled(trio.map((m) => store.remove(other, m.id, removeUnlessLast, { ...NOTE, action: "member.removed" })));
    expect(removed.filter((o) => o.status === "fulfilled")).toHaveLength(2);
    expect(await owners(other)).toHaveLength(1);
    expect(await audited(other)).toEqual([...trio.map(() => "member.invited"), "member.removed", "member.removed"]);
  });

  it("a change refused by its decision writes nothing; a disabled owner no longer counts", async () => {
    const companyId = await newCompany();
    const a = await newMember(companyId, "owner");
    await expect(store.update(companyId, a.id, demoteUnlessLast, NOTE)).rejects.toThrow("last owner");
    await expect(store.remove(companyId, a.id, removeUnlessLast, NOTE)).rejects.toThrow("last owner");
    expect(await store.find(companyId, a.id)).toMatchObject({ role: "owner", disabled: false });
    expect(await audited(companyId)).toEqual(["member.invited"]);

    const b = await newMember(companyId, "owner");
    expect(await store.update(companyId, b.id, () => ({ disabled: true, displayName: "Bea" }), NOTE)).toMatchObject({ id: b.id, disabled: true, displayName: "Bea" });
    let counted = 0;
    await expect(
      store.update(
        companyId,
        a.id,
        (current, activeOwners) => {
          counted = activeOwners;
          return demoteUnlessLast(current, activeOwners);
        },
        NOTE,
      ),
    ).rejects.toThrow("last owner");
    expect(counted).toBe(1);
    // An empty patch changes nothing but is audited like any update.
    expect(await store.update(companyId, b.id, () => ({}), NOTE)).toEqual(await store.find(companyId, b.id));
    expect(await audited(companyId)).toEqual(["member.invited", "member.invited", "member.updated", "member.updated"]);
  });

  it("uses a link once, also when exchanges race, and records the sign-in", async () => {
    const companyId = await newCompany();
    const member = await newMember(companyId);
    const now = new Date();
    const link = await newLink(companyId, member.id, new Date(now.getTime() + 15 * MINUTE));
    const opened = await Promise.all(
      Array.from({ length: 8 }, () => store.exchangeLink(link, now, { secretHash: randomBytes(32), expiresAt: new Date(now.getTime() + 60 * MINUTE) })),
    );
    const sessions = opened.filter((s) => s !== null);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toEqual({
      sessionId: expect.any(String),
      member: { ...member, lastSignInAt: now },
      company: { id: companyId, name: expect.any(String), entitlements: { api: true, smtp: false } },
      createdAt: now,
      expiresAt: new Date(now.getTime() + 60 * MINUTE),
    });
    expect(await sessionRows(member.id)).toBe(1);
    expect(await store.find(companyId, member.id)).toMatchObject({ lastSignInAt: now });
    expect(await store.exchangeLink(link, now, { secretHash: randomBytes(32), expiresAt: new Date(now.getTime() + MINUTE) })).toBeNull();
  });

  it("an exchange waiting for a concurrent use of its link opens nothing once that use commits, and opens the session if it rolls back", async () => {
    const companyId = await newCompany();
    const member = await newMember(companyId);
    const now = new Date();
    for (const [ending, opens] of [
      ["commit", false],
      ["rollback", true],
    ] as const) {
      const link = await newLink(companyId, member.id, new Date(now.getTime() + 15 * MINUTE));
      const rival = new pg.Client({ connectionString: h.db.url });
      await rival.connect();
      try {
        await rival.query("begin");
        await rival.query(`update sign_in_link set used_at = now() where token_hash = $1`, [link]);
        const exchange = store.exchangeLink(link, now, { secretHash: randomBytes(32), expiresAt: new Date(now.getTime() + MINUTE) });
        await waitingForLocks(1);
        await rival.query(ending);
        expect(await exchange, ending).toEqual(opens ? expect.objectContaining({ member: expect.objectContaining({ id: member.id }) }) : null);
      } finally {
        await rival.end();
      }
    }
  });

  it("refuses expired links, links of disabled members, and unknown links", async () => {
    const companyId = await newCompany();
    const member = await newMember(companyId);
    const now = new Date();
    const session = { secretHash: randomBytes(32), expiresAt: new Date(now.getTime() + MINUTE) };
    const expired = await newLink(companyId, member.id, now);
    expect(await store.exchangeLink(expired, now, session)).toBeNull();
    const usable = await newLink(companyId, member.id, new Date(now.getTime() + MINUTE));
    await store.update(companyId, member.id, () => ({ disabled: true }), NOTE);
    expect(await store.exchangeLink(usable, now, session)).toBeNull();
    expect(await store.exchangeLink(randomBytes(32), now, session)).toBeNull();
    // Nothing was used: enabled again, the member can use the link.
    await store.update(companyId, member.id, () => ({ disabled: false }), NOTE);
    expect(await store.exchangeLink(usable, now, session)).not.toBeNull();
  });

  it("takes the email slot once among concurrent claims, and again only after the interval", async () => {
    const companyId = await newCompany();
    const member = await newMember(companyId);
    const now = new Date("2030-01-01T12:00:00.000Z");
    const claims = await Promise.all(Array.from({ length: 8 }, () => store.claimEmailSlot(companyId, member.id, now, new Date(now.getTime() - MINUTE))));
    expect(claims.filter(Boolean)).toHaveLength(1);
    const soon = new Date(now.getTime() + 30_000);
    expect(await store.claimEmailSlot(companyId, member.id, soon, new Date(soon.getTime() - MINUTE))).toBe(false);
    const later = new Date(now.getTime() + MINUTE + 1);
    expect(await store.claimEmailSlot(companyId, member.id, later, new Date(later.getTime() - MINUTE))).toBe(true);
  });

  it("finds a live session by its secret's hash, marks it seen only forward, and ends it when idle or past its end", async () => {
    const companyId = await newCompany();
    const member = await newMember(companyId);
    const t0 = new Date("2030-01-01T12:00:00.000Z");
    const at = (minutes: number) => new Date(t0.getTime() + minutes * MINUTE);
    const { secretHash, session } = await openSession(companyId, member.id, t0, at(12 * 60));

    // Seen a minute ago: no new mark; ten minutes: marked.
    expect(await store.findSession(secretHash, at(1), IDLE_MS, TOUCH_AFTER_MS)).toEqual(session);
    expect(await lastSeen(session.sessionId)).toEqual(t0);
    expect(await store.findSession(secretHash, at(10), IDLE_MS, TOUCH_AFTER_MS)).toEqual(session);
    expect(await lastSeen(session.sessionId)).toEqual(at(10));
    // A request that read the clock earlier does not move the mark back.
    expect(await store.findSession(secretHash, at(8), IDLE_MS, 0)).toEqual(session);
    expect(await lastSeen(session.sessionId)).toEqual(at(10));
    // Nor when it read the session before a concurrent request marked it later: its touch, waiting for that
    // request's row lock, finds the newer mark and leaves it.
    const rival = new pg.Client({ connectionString: h.db.url });
    await rival.connect();
    try {
      await rival.query("begin");
      await rival.query(`update member_session set last_seen_at = $2 where id = $1`, [session.sessionId, at(20)]);
      const late = store.findSession(secretHash, at(15), IDLE_MS, TOUCH_AFTER_MS);
      await waitingForLocks(1);
      await rival.query("commit");
      expect(await late).toEqual(session);
    } finally {
      await rival.end();
    }
    expect(await lastSeen(session.sessionId)).toEqual(at(20));
    // Idle: 29 minutes after the last mark it lives (and is marked), 30 minutes after that it is gone.
    expect(await store.findSession(secretHash, at(49), IDLE_MS, TOUCH_AFTER_MS)).toEqual(session);
    expect(await store.findSession(secretHash, at(79), IDLE_MS, TOUCH_AFTER_MS)).toBeNull();
    expect(await store.findSession(randomBytes(32), at(40), IDLE_MS, TOUCH_AFTER_MS)).toBeNull();

    // The absolute end, however recently the session was used.
    const short = await openSession(companyId, member.id, t0, at(60));
    for (const minutes of [25, 50, 59]) expect(await store.findSession(short.secretHash, at(minutes), IDLE_MS, TOUCH_AFTER_MS)).toEqual(short.session);
    expect(await store.findSession(short.secretHash, at(60), IDLE_MS, TOUCH_AFTER_MS)).toBeNull();

    // A member disabled behind the store's back has no live session, though the row is still there.
    const other = await newMember(companyId);
    const live = await openSession(companyId, other.id, t0, at(60));
    await h.db.query(`update member set disabled_at = now() where id = $1`, [other.id]);
    expect(await store.findSession(live.secretHash, at(1), IDLE_MS, TOUCH_AFTER_MS)).toBeNull();
    expect(await sessionRows(other.id)).toBe(1);

    await store.deleteSession(secretHash);
    await store.deleteSession(short.secretHash);
    expect(await sessionRows(member.id)).toBe(0);
  });

  it("disabling a member deletes their sessions; ending sessions counts them", async () => {
    const companyId = await newCompany();
    const member = await newMember(companyId);
    const other = await newMember(companyId);
    const now = new Date();
    const { secretHash } = await openSession(companyId, member.id, now);
    await openSession(companyId, member.id, now);
    const kept = await openSession(companyId, other.id, now);
    expect(await sessionRows(member.id)).toBe(2);

    // A change other than disabling keeps them.
    await store.update(companyId, member.id, () => ({ displayName: "Still here" }), NOTE);
    expect(await sessionRows(member.id)).toBe(2);
    await store.update(companyId, member.id, () => ({ disabled: true }), NOTE);
    expect(await sessionRows(member.id)).toBe(0);
    expect(await store.findSession(secretHash, now, IDLE_MS, TOUCH_AFTER_MS)).toBeNull();
    expect(await store.findSession(kept.secretHash, now, IDLE_MS, TOUCH_AFTER_MS)).toEqual(kept.session);

    await openSession(companyId, other.id, now);
    const ended = { ...NOTE, action: "member.sessions_ended" as const };
    expect(await store.endSessions(companyId, other.id, () => undefined, ended)).toBe(2);
    expect(await store.endSessions(companyId, other.id, () => undefined, ended)).toBe(0);
    const details = await h.db.query<{ details: unknown }>(`select details from audit_event where company_id = $1 and action = 'member.sessions_ended' order by occurred_at`, [
      companyId,
    ]);
    expect(details.rows.map((r) => r.details)).toEqual([{ ended: 2 }, { ended: 0 }]);
  });

  it("housekeeping deletes ended sessions and links a day past their end", async () => {
    const companyId = await newCompany();
    const member = await newMember(companyId);
    const t0 = new Date("2031-06-01T00:00:00.000Z");
    await openSession(companyId, member.id, t0, new Date(t0.getTime() + 60 * MINUTE));
    const purgeAt = new Date(t0.getTime() + 25 * 60 * MINUTE);
    const before = await h.db.query(`select 1 from sign_in_link where member_id = $1`, [member.id]);
    expect(before.rowCount).toBe(1);
    expect(await store.deleteExpired(purgeAt, IDLE_MS)).toBeGreaterThanOrEqual(2);
    expect(await sessionRows(member.id)).toBe(0);
    expect((await h.db.query(`select 1 from sign_in_link where member_id = $1`, [member.id])).rowCount).toBe(0);
  });

  it("never answers another company's member", async () => {
    const companyId = await newCompany();
    const elsewhere = await newCompany();
    const member = await newMember(companyId, "owner", "shared@members.example");
    await newMember(companyId, "owner");
    const never = (): never => {
      throw new Error("decided on another company's member");
    };
    expect(await store.find(elsewhere, member.id)).toBeNull();
    expect(await store.findByEmail(elsewhere, "shared@members.example")).toBeNull();
    expect(await store.list(elsewhere, null, 10)).toEqual([]);
    expect(await store.update(elsewhere, member.id, never, NOTE)).toBeNull();
    expect(await store.remove(elsewhere, member.id, never, NOTE)).toBeNull();
    expect(await store.endSessions(elsewhere, member.id, never, NOTE)).toBeNull();
    expect(await store.claimEmailSlot(elsewhere, member.id, new Date(), new Date(0))).toBe(false);
    expect(await audited(elsewhere)).toEqual([]);
    // The same address in another company is another member.
    const twin = await store.insertOrFind(elsewhere, { email: "shared@members.example", displayName: "", role: "member" }, { ...NOTE, action: "member.invited" });
    expect(twin.created).toBe(true);
    expect(twin.member.id).not.toBe(member.id);
    expect(await store.find(companyId, member.id)).toMatchObject({ role: "owner", disabled: false });
  });

  it("answers not found for ids that are no UUID", async () => {
    const companyId = await newCompany();
    const never = (): never => {
      throw new Error("decided without a member");
    };
    for (const id of ["not-a-uuid", "", "1; drop table member"]) {
      expect(await store.find(companyId, id)).toBeNull();
      expect(await store.find(id, randomUUID())).toBeNull();
      expect(await store.findByEmail(id, "a@members.example")).toBeNull();
      expect(await store.list(id, null, 10)).toEqual([]);
      expect(await store.update(companyId, id, never, NOTE)).toBeNull();
      expect(await store.remove(companyId, id, never, NOTE)).toBeNull();
      expect(await store.endSessions(id, randomUUID(), never, NOTE)).toBeNull();
    }
    expect(await store.find(companyId, randomUUID())).toBeNull();
  });
});
