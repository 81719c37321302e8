import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ValidationError } from "../../../src/contract/api-error.ts";
import { PostgresMembersStore } from "../../../src/adapters/postgres/members/postgres-members-store.ts";
import { OPERATOR_ACTOR } from "../../../src/capabilities/audit/types.ts";
import { type Acting, Members, Sessions } from "../../../src/capabilities/members/index.ts";
import { scopesOfRole } from "../../../src/capabilities/members/roles.ts";
import type { RateLimiter } from "../../../src/capabilities/rate-limit/types.ts";
import { expectApiError, type Harness, openHarness } from "../accounts/harness.ts";

/** Budgets are not under test here (test/api/sessions.test.ts floods the real limiter). */
const unlimited: RateLimiter = {
  consume: async ({ limitPerMinute: limit }) => ({ allowed: true, limit, remaining: limit, resetSeconds: 60, retryAfterSeconds: 0 }),
};

const operator: Acting = { audit: { actor: OPERATOR_ACTOR, requestId: "test", clientIp: "" }, role: undefined };

describe("members and sessions on PostgreSQL, with a clock the test moves", () => {
  let h: Harness;
  let members: Members;
  let sessions: Sessions;
  let companyId: string;

  beforeAll(async () => {
    h = await openHarness();
    const store = new PostgresMembersStore(h.orm);
    members = new Members({
      store,
      cursorSecret: "test-cursor-secret",
      rateLimiter: unlimited,
      clock: h.clock.now,
      publicBaseUrl: "https://mail.example",
      companyName: async () => "Clocked Co",
    });
    sessions = new Sessions({ store, rateLimiter: unlimited, clock: h.clock.now });
    companyId = (await h.accounts.companies.create({ name: "Clocked Co" })).id;
  });
  afterAll(async () => h?.close());

  const signIn = async (email: string) => {
    const link = await members.createSignInLink({ companyId, email, acting: operator });
    expect(link.signInUrl).toMatch(/^https:\/\/mail\.example\/admin\/sign-in#token=[A-Za-z0-9_-]{43}$/);
    return sessions.exchange({ token: link.signInUrl.split("#token=")[1] ?? "", clientAddress: "192.0.2.1" });
  };

  it("maps roles to scopes in one place: members read, admins and owners administer but do not send", () => {
    expect([...scopesOfRole("member")].sort()).toEqual(["mail.contacts.read", "mail.events.read"]);
    for (const role of ["admin", "owner"] as const) {
      expect(scopesOfRole(role)).toContain("mail.admin");
      expect(scopesOfRole(role)).not.toContain("mail.transactional.send");
    }
  });

  it("a link lasts 15 minutes; a session 30 idle minutes and 12 hours at most", async () => {
    await members.invite({ companyId, email: "clock@clocked.example", role: "owner", acting: operator });
    const late = await members.createSignInLink({ companyId, email: "clock@clocked.example", acting: operator });
    h.clock.advanceHours(16 / 60);
    await expectApiError(sessions.exchange({ token: late.signInUrl.split("#token=")[1] ?? "", clientAddress: "192.0.2.1" }), "SIGN_IN_LINK_INVALID");

    const { secret } = await signIn("clock@clocked.example");
    // Used every 25 minutes, it lives until the 12th hour...
    for (let i = 0; i < 28; i++) {
      h.clock.advanceHours(25 / 60);
      expect(await sessions.authenticate(secret), `after ${(i + 1) * 25} minutes`).toBeDefined();
    }
    h.clock.advanceHours(25 / 60); // 12 h 5 min after sign-in
    expect(await sessions.authenticate(secret)).toBeUndefined();

    const idle = await signIn("clock@clocked.example");
    h.clock.advanceHours(31 / 60);
    expect(await sessions.authenticate(idle.secret)).toBeUndefined();
  });

  it("two owners demoting each other at once: one wins, one owner remains", async () => {
    const raceCo = (await h.accounts.companies.create({ name: "Race Co" })).id;
    const a = (await members.invite({ companyId: raceCo, email: "a@race.example", role: "owner", acting: operator })).member;
    const b = (await members.invite({ companyId: a.companyId, email: "b@race.example", role: "owner", acting: operator })).member;
    const asOwner: Acting = { ...operator, role: "owner" };
    const outcomes = await Promise.allSettled([
      members.update({ companyId: a.companyId, memberId: a.id, role: "admin", acting: asOwner }),
      members.update({ companyId: a.companyId, memberId: b.id, role: "admin", acting: asOwner }),
    ]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const owners = (await members.list({ companyId: a.companyId })).items.filter((m) => m.role === "owner" && !m.disabled);
    expect(owners).toHaveLength(1);
  });

  it("an admin cannot touch owners; a member id of another company is not found", async () => {
    const owner = (await members.invite({ companyId, email: "kept-owner@clocked.example", role: "owner", acting: operator })).member;
    const asAdmin: Acting = { ...operator, role: "admin" };
    await expectApiError(members.update({ companyId, memberId: owner.id, disabled: true, acting: asAdmin }), "FORBIDDEN");
    await expectApiError(members.remove({ companyId, memberId: owner.id, acting: asAdmin }), "FORBIDDEN");
    await expectApiError(members.invite({ companyId, email: "new-owner@clocked.example", role: "owner", acting: asAdmin }), "FORBIDDEN");
    const other = (await h.accounts.companies.create({ name: "Elsewhere" })).id;
    await expectApiError(members.remove({ companyId: other, memberId: owner.id, acting: operator }), "NOT_FOUND");
    await expectApiError(members.endSessions({ companyId: other, memberId: owner.id, acting: operator }), "NOT_FOUND");
  });

  it("lists members oldest first, in pages bound to the company", async () => {
    const paged = (await h.accounts.companies.create({ name: "Paged Co" })).id;
    const invited = [];
    for (const email of ["one@paged.example", "two@paged.example", "three@paged.example"]) {
      invited.push((await members.invite({ companyId: paged, email, acting: operator })).member.id);
    }
    const first = await members.list({ companyId: paged, limit: 2 });
    expect(first.items.map((m) => m.id)).toEqual(invited.slice(0, 2));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await members.list({ companyId: paged, limit: 2, cursor: first.nextCursor ?? "" });
    expect(second).toEqual({ items: [expect.objectContaining({ id: invited[2] })], nextCursor: null });
    expect((await members.list({ companyId: paged })).items).toHaveLength(3);
    // Another company's cursor, and a page size out of range, are refused naming the field.
    const foreign = (await expectApiError(members.list({ companyId, cursor: first.nextCursor ?? "" }), "VALIDATION_ERROR")) as ValidationError;
    expect(foreign.fields).toEqual([{ field: "cursor", problem: expect.stringContaining("not a valid cursor") }]);
    const tooMany = (await expectApiError(members.list({ companyId: paged, limit: 101 }), "VALIDATION_ERROR")) as ValidationError;
    expect(tooMany.fields).toEqual([{ field: "limit", problem: "must be an integer from 1 to 100" }]);
  });
});
