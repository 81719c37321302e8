import { LockMode, raw, sql } from "@mikro-orm/core";
import type { EntityManager, MikroORM, QueryBuilder } from "@mikro-orm/postgresql";
import type { AuditNote, MemberPatch, MembersStore, NewMember } from "../../../capabilities/members/ports.ts";
import type { MemberRecord, MemberRole, SessionRecord } from "../../../capabilities/members/types.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";
import { MemberSchema, MemberSessionSchema, SignInLinkSchema, type Member, type MemberSession } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { keysetRows } from "../keyset.ts";

/** Links are kept a day past their end, then deleted by housekeeping. */
const LINK_KEPT_MS = 86_400_000;

function memberRecord(member: Member): MemberRecord {
  return {
    id: member.id,
    companyId: member.company.id,
    email: member.email,
    displayName: member.displayName,
    // The table's check constraint admits only the member roles.
    role: member.role as MemberRole,
    disabled: (member.disabledAt ?? null) !== null,
    createdAt: member.createdAt,
    lastSignInAt: member.lastSignInAt ?? null,
  };
}

/** A session loaded by sessionQuery: its member and the member's company are populated. */
function sessionRecord(session: MemberSession): SessionRecord {
  const { member } = session;
  const { company } = member;
  return {
    sessionId: session.id,
    member: memberRecord(member),
    company: { id: company.id, name: company.name, entitlements: { api: company.entitlementApi, smtp: company.entitlementSmtp } },
    createdAt: session.createdAt,
    expiresAt: session.expiresAt,
  };
}

/**
 * Members, sign-in links and sessions on PostgreSQL through MikroORM, each
 * call on its own EntityManager fork. Every change and its audit row commit
 * in one transaction. Every statement on a company's members filters on
 * company_id (updates and deletes as native statements, never a flush whose
 * UPDATE would name the id alone). The exceptions: the presented secrets (a
 * link's token, a session's cookie) are looked up by their hash, which tells
 * the company, and housekeeping deletes ended sessions and links of all
 * companies. The lookups and changes by a caller's ids (list, find,
 * findByEmail, update, remove, endSessions) answer nothing for an id that is
 * no UUID rather than fail the query.
 *
 * Concurrency:
 * - update, remove and endSessions first lock the company's active owners
 *   (`order by id for update`, one order for everyone), then the member, and
 *   decide under those locks: of two concurrent changes that each would
 *   leave one owner, the second sees the first's result, so the last active
 *   owner is never demoted, disabled or removed.
 * - claimEmailSlot is one conditional update: of concurrent claims, one
 *   takes the slot.
 * - exchangeLink takes the link with one conditional update whose
 *   `used_at is null` PostgreSQL rechecks after a concurrent exchange
 *   commits: a link opens one session, whoever races.
 * - findSession marks the session seen only when its mark is older
 *   (`last_seen_at < now`), so a late touch never moves it back.
 * - Disabling a member deletes their sessions in the same transaction.
 */
export class PostgresMembersStore implements MembersStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  #fork(): EntityManager {
    return this.#orm.em.fork();
  }

  async list(companyId: string, after: KeysetPosition | null, limit: number): Promise<Positioned<MemberRecord>[]> {
    if (!isUuid(companyId)) return [];
    const em = this.#fork();
    const query = em.createQueryBuilder(MemberSchema, "m").select("*").where({ company: companyId }).orderBy({ createdAt: "asc", id: "asc" }).limit(limit);
    const rows = await keysetRows(query, { created: "m.created_at", id: "m.id", direction: ">" }, after);
    return rows.map(({ row, position }) => ({ item: memberRecord(em.map(MemberSchema, row)), position }));
  }

  async find(companyId: string, memberId: string): Promise<MemberRecord | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return null;
    const member = await this.#fork().findOne(MemberSchema, { company: companyId, id: memberId });
    return member ? memberRecord(member) : null;
  }

  async findByEmail(companyId: string, email: string): Promise<MemberRecord | null> {
    if (!isUuid(companyId)) return null;
    const member = await this.#fork().findOne(MemberSchema, { company: companyId, email });
    return member ? memberRecord(member) : null;
  }

  insertOrFind(companyId: string, member: NewMember, audit: AuditNote): Promise<{ member: MemberRecord; created: boolean }> {
    return this.#fork().transactional(async (em) => {
      // `on conflict do nothing` rather than a caught unique violation: an address taken (also by a concurrent
      // invite, whose commit this insert waits for) leaves the transaction usable, and the stored member is read.
      const inserted = await em
        .createQueryBuilder(MemberSchema)
        .insert({ company: companyId, email: member.email, displayName: member.displayName, role: member.role })
        .onConflict(["company", "email"])
        .ignore()
        .returning(["*"])
        .execute("run", false);
      const row = inserted.rows?.[0];
      const found = row ? em.map(MemberSchema, row) : await em.findOne(MemberSchema, { company: companyId, email: member.email });
      if (!found) throw new Error("member insert found no row");
      const created = row !== undefined;
      if (created) persistAuditRow(em, companyId, { ...audit, targetType: "member", targetId: found.id });
      await em.flush();
      return { member: memberRecord(found), created };
    });
  }

  update(
    companyId: string,
    memberId: string,
    decide: (current: MemberRecord, activeOwners: number) => MemberPatch,
    audit: AuditNote,
  ): Promise<MemberRecord | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return Promise.resolve(null);
    return this.#fork().transactional(async (em) => {
      const locked = await lockForChange(em, companyId, memberId);
      if (!locked) return null;
      const patch = decide(memberRecord(locked.member), locked.activeOwners);
      const changes = {
        ...(patch.role !== undefined ? { role: patch.role } : {}),
        ...(patch.displayName !== undefined ? { displayName: patch.displayName } : {}),
        // A member disabled before keeps their first disabled_at.
        ...(patch.disabled !== undefined ? { disabledAt: patch.disabled ? raw("coalesce(disabled_at, now())") : null } : {}),
      };
      let member = locked.member;
      // An empty patch changes nothing: the locked member is the answer.
      if (Object.keys(changes).length > 0) {
        const updated = await em
          .createQueryBuilder(MemberSchema)
          .update(changes)
          .where({ company: companyId, id: memberId })
          .returning(["*"])
          .execute("run", false);
        const row = updated.rows?.[0];
        if (!row) return null;
        member = em.map(MemberSchema, row);
      }
      // A disabled member loses every session at once.
      if (patch.disabled === true) await em.nativeDelete(MemberSessionSchema, { companyId, member: memberId });
      persistAuditRow(em, companyId, { ...audit, targetType: "member", targetId: memberId });
      await em.flush();
      return memberRecord(member);
    });
  }

  remove(companyId: string, memberId: string, check: (current: MemberRecord, activeOwners: number) => void, audit: AuditNote): Promise<MemberRecord | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return Promise.resolve(null);
    return this.#fork().transactional(async (em) => {
      const locked = await lockForChange(em, companyId, memberId);
      if (!locked) return null;
      const current = memberRecord(locked.member);
      check(current, locked.activeOwners);
      // Sessions and links go with the member (on delete cascade).
      await em.nativeDelete(MemberSchema, { company: companyId, id: memberId });
      persistAuditRow(em, companyId, { ...audit, details: { ...audit.details, email: current.email }, targetType: "member", targetId: memberId });
      await em.flush();
      return current;
    });
  }

  endSessions(companyId: string, memberId: string, check: (current: MemberRecord) => void, audit: AuditNote): Promise<number | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return Promise.resolve(null);
    return this.#fork().transactional(async (em) => {
      const locked = await lockForChange(em, companyId, memberId);
      if (!locked) return null;
      check(memberRecord(locked.member));
      const ended = await em.nativeDelete(MemberSessionSchema, { companyId, member: memberId });
      persistAuditRow(em, companyId, { ...audit, details: { ...audit.details, ended }, targetType: "member", targetId: memberId });
      await em.flush();
      return ended;
    });
  }

  createLink(companyId: string, memberId: string, link: { tokenHash: Buffer; expiresAt: Date }, audit: AuditNote | undefined): Promise<void> {
    return this.#fork().transactional(async (em) => {
      em.create(SignInLinkSchema, { companyId, member: memberId, tokenHash: link.tokenHash, expiresAt: link.expiresAt });
      if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "member", targetId: memberId });
      await em.flush();
    });
  }

  async claimEmailSlot(companyId: string, memberId: string, now: Date, notBefore: Date): Promise<boolean> {
    // A conditional update: of concurrent claims, the first to commit takes the slot; the others find it taken.
    const claimed = await this.#fork().nativeUpdate(
      MemberSchema,
      { company: companyId, id: memberId, $or: [{ lastLinkEmailedAt: null }, { lastLinkEmailedAt: { $lt: notBefore } }] },
      { lastLinkEmailedAt: now },
    );
    return claimed > 0;
  }

  exchangeLink(linkHash: Buffer, now: Date, session: { secretHash: Buffer; expiresAt: Date }): Promise<SessionRecord | null> {
    return this.#fork().transactional(async (em) => {
      // The link's member, enabled and of the link's company (a subquery correlated with the updated row).
      const enabledMember = em.createQueryBuilder(MemberSchema, "m").select("m.id").where({ company: sql.ref("sign_in_link.company_id"), disabledAt: null });
      // Single use: the conditional update takes the link once, whoever races. Its conditions name the link's own
      // columns (no join, which MikroORM would turn into `id in (select ...)`), so PostgreSQL rechecks `used_at is
      // null` on the row a concurrent exchange committed, and the loser updates nothing.
      const used = await em
        .createQueryBuilder(SignInLinkSchema)
        .update({ usedAt: now })
        .where({ tokenHash: linkHash, usedAt: null, expiresAt: { $gt: now }, member: { $in: enabledMember } })
        .returning(["companyId", "member"])
        .execute("run", false);
      const link = (used.rows as { company_id: string; member_id: string }[] | undefined)?.[0];
      if (!link) return null;
      await em.nativeUpdate(MemberSchema, { company: link.company_id, id: link.member_id }, { lastSignInAt: now });
      const created = em.create(MemberSessionSchema, {
        companyId: link.company_id,
        member: link.member_id,
        secretHash: session.secretHash,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: session.expiresAt,
      });
      await em.flush();
      const opened = await sessionQuery(em).where({ id: created.id }).getSingleResult();
      return opened ? sessionRecord(opened) : null;
    });
  }

  async findSession(secretHash: Buffer, now: Date, idleMs: number, touchAfterMs: number): Promise<SessionRecord | null> {
    const em = this.#fork();
    const session = await sessionQuery(em)
      .where({ secretHash, expiresAt: { $gt: now }, lastSeenAt: { $gt: new Date(now.getTime() - idleMs) }, member: { disabledAt: null } })
      .getSingleResult();
    if (!session) return null;
    if (now.getTime() - session.lastSeenAt.getTime() >= touchAfterMs) {
      // Conditional: a concurrent request that marked it later keeps its mark.
      await em.nativeUpdate(MemberSessionSchema, { companyId: session.companyId, id: session.id, lastSeenAt: { $lt: now } }, { lastSeenAt: now });
    }
    return sessionRecord(session);
  }

  async deleteSession(secretHash: Buffer): Promise<void> {
    await this.#fork().nativeDelete(MemberSessionSchema, { secretHash });
  }

  async deleteExpired(now: Date, idleMs: number): Promise<number> {
    const em = this.#fork();
    const sessions = await em.nativeDelete(MemberSessionSchema, {
      $or: [{ expiresAt: { $lte: now } }, { lastSeenAt: { $lte: new Date(now.getTime() - idleMs) } }],
    });
    const links = await em.nativeDelete(SignInLinkSchema, { expiresAt: { $lte: new Date(now.getTime() - LINK_KEPT_MS) } });
    return sessions + links;
  }
}

/**
 * Sessions with their member and the member's company in one statement; the
 * member must be of the session's company (the join's condition).
 */
function sessionQuery(em: EntityManager): QueryBuilder<MemberSession, "s"> {
  return em
    .createQueryBuilder(MemberSessionSchema, "s")
    .select("*")
    .joinAndSelect("s.member", "m", { company: sql.ref("s.company_id") })
    .joinAndSelect("m.company", "c");
}

/**
 * Locks the company's active owners (in id order, so that concurrent changes
 * queue rather than deadlock), then the member; answers the member and how
 * many active owners there are. Inside a transaction.
 */
async function lockForChange(em: EntityManager, companyId: string, memberId: string): Promise<{ member: Member; activeOwners: number } | null> {
  // Rows, not entities: the owners are only counted.
  const owners = await em
    .createQueryBuilder(MemberSchema, "m")
    .select("id")
    .where({ company: companyId, role: "owner", disabledAt: null })
    .orderBy({ id: "asc" })
    .setLockMode(LockMode.PESSIMISTIC_WRITE)
    .execute<{ id: string }[]>("all", false);
  const member = await em.findOne(MemberSchema, { company: companyId, id: memberId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  return member ? { member, activeOwners: owners.length } : null;
}
