import type { AuditNote, MemberPatch, MembersStore, NewMember } from "../../../capabilities/members/ports.ts";
import type { MemberRecord, MemberRole, SessionRecord } from "../../../capabilities/members/types.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { insertAuditRow } from "../audit/audit-rows.ts";
import { isUuid } from "../ids.ts";
import { afterPosition, positionText } from "../keyset.ts";
import { toDate, type Pool, type PoolClient } from "../sql.ts";
import { inTransaction } from "../transaction.ts";

interface MemberRow {
  id: string;
  company_id: string;
  email: string;
  display_name: string;
  role: MemberRole;
  disabled_at: string | Date | null;
  created_at: string | Date;
  last_sign_in_at: string | Date | null;
}

interface SessionRow extends MemberRow {
  session_id: string;
  session_created_at: string | Date;
  session_expires_at: string | Date;
  last_seen_at: string | Date;
  company_name: string;
  entitlement_api: boolean;
  entitlement_smtp: boolean;
}

const MEMBER_COLUMNS = "m.id, m.company_id, m.email, m.display_name, m.role, m.disabled_at, m.created_at, m.last_sign_in_at";

const SESSION_SELECT = `select s.id as session_id, s.created_at as session_created_at, s.expires_at as session_expires_at, s.last_seen_at,
        ${MEMBER_COLUMNS}, c.name as company_name, c.entitlement_api, c.entitlement_smtp
   from member_session s
   join member m on m.id = s.member_id and m.company_id = s.company_id
   join company c on c.id = m.company_id`;

function memberRecord(row: MemberRow): MemberRecord {
  return {
    id: row.id,
    companyId: row.company_id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    disabled: row.disabled_at !== null,
    createdAt: toDate(row.created_at),
    lastSignInAt: toDate(row.last_sign_in_at),
  };
}

function sessionRecord(row: SessionRow): SessionRecord {
  return {
    sessionId: row.session_id,
    member: memberRecord(row),
    company: { id: row.company_id, name: row.company_name, entitlements: { api: row.entitlement_api, smtp: row.entitlement_smtp } },
    createdAt: toDate(row.session_created_at),
    expiresAt: toDate(row.session_expires_at),
  };
}

/**
 * Members, sign-in links and sessions in plain SQL: every change and its
 * audit row in one transaction (src/adapters/postgres/transaction.ts).
 * Changes that could leave a company without an owner lock the company's
 * active owners first, so two concurrent demotions cannot both pass.
 */
export class PostgresMembersStore implements MembersStore {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async list(companyId: string, after: KeysetPosition | null, limit: number): Promise<Positioned<MemberRecord>[]> {
    if (!isUuid(companyId)) return [];
    const pool = await this.#pool();
    const { rows } = await pool.query<MemberRow & { position_at: string }>(
      `select ${MEMBER_COLUMNS}, ${positionText("m.created_at")} as position_at
         from member m
        where m.company_id = $1 ${after ? `and ${afterPosition("m.created_at", "m.id", ">", "$3", "$4")}` : ""}
        order by m.created_at, m.id
        limit $2`,
      after ? [companyId, limit, after.createdAt, after.id] : [companyId, limit],
    );
    return rows.map((row) => ({ item: memberRecord(row), position: { createdAt: row.position_at, id: row.id } }));
  }

  async find(companyId: string, memberId: string): Promise<MemberRecord | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return null;
    const pool = await this.#pool();
    const { rows } = await pool.query<MemberRow>(`select ${MEMBER_COLUMNS} from member m where m.company_id = $1 and m.id = $2`, [companyId, memberId]);
    return rows[0] ? memberRecord(rows[0]) : null;
  }

  async findByEmail(companyId: string, email: string): Promise<MemberRecord | null> {
    if (!isUuid(companyId)) return null;
    const pool = await this.#pool();
    const { rows } = await pool.query<MemberRow>(`select ${MEMBER_COLUMNS} from member m where m.company_id = $1 and m.email = $2`, [companyId, email]);
    return rows[0] ? memberRecord(rows[0]) : null;
  }

  insertOrFind(companyId: string, member: NewMember, audit: AuditNote): Promise<{ member: MemberRecord; created: boolean }> {
    return inTransaction(this.#pool, async (client) => {
      const inserted = await client.query<MemberRow>(
        `insert into member as m (company_id, email, display_name, role) values ($1, $2, $3, $4)
         on conflict (company_id, email) do nothing
         returning ${MEMBER_COLUMNS}`,
        [companyId, member.email, member.displayName, member.role],
      );
      let row = inserted.rows[0];
      const created = row !== undefined;
      if (!row) {
        const found = await client.query<MemberRow>(`select ${MEMBER_COLUMNS} from member m where m.company_id = $1 and m.email = $2`, [companyId, member.email]);
        row = found.rows[0];
      }
      if (!row) throw new Error("member insert found no row");
      if (created) await insertAuditRow(client, companyId, { ...audit, targetType: "member", targetId: row.id }, new Date());
      return { member: memberRecord(row), created };
    });
  }

  update(
    companyId: string,
    memberId: string,
    decide: (current: MemberRecord, activeOwners: number) => MemberPatch,
    audit: AuditNote,
  ): Promise<MemberRecord | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return Promise.resolve(null);
    return inTransaction(this.#pool, async (client) => {
      const locked = await lockForChange(client, companyId, memberId);
      if (!locked) return null;
      const patch = decide(locked.member, locked.activeOwners);
      const { rows } = await client.query<MemberRow>(
        `update member m set
            role = coalesce($3, m.role),
            display_name = coalesce($4, m.display_name),
            disabled_at = case when $5::boolean is null then m.disabled_at
                               when $5::boolean then coalesce(m.disabled_at, now()) else null end
          where m.company_id = $1 and m.id = $2
          returning ${MEMBER_COLUMNS}`,
        [companyId, memberId, patch.role ?? null, patch.displayName ?? null, patch.disabled ?? null],
      );
      const row = rows[0];
      if (!row) return null;
      // A disabled member loses every session at once.
      if (patch.disabled === true) await client.query(`delete from member_session where company_id = $1 and member_id = $2`, [companyId, memberId]);
      await insertAuditRow(client, companyId, { ...audit, targetType: "member", targetId: memberId }, new Date());
      return memberRecord(row);
    });
  }

  remove(companyId: string, memberId: string, check: (current: MemberRecord, activeOwners: number) => void, audit: AuditNote): Promise<MemberRecord | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return Promise.resolve(null);
    return inTransaction(this.#pool, async (client) => {
      const locked = await lockForChange(client, companyId, memberId);
      if (!locked) return null;
      check(locked.member, locked.activeOwners);
      // Sessions and links go with the member (on delete cascade).
      await client.query(`delete from member where company_id = $1 and id = $2`, [companyId, memberId]);
      await insertAuditRow(
        client,
        companyId,
        { ...audit, details: { ...audit.details, email: locked.member.email }, targetType: "member", targetId: memberId },
        new Date(),
      );
      return locked.member;
    });
  }

  endSessions(companyId: string, memberId: string, check: (current: MemberRecord) => void, audit: AuditNote): Promise<number | null> {
    if (!isUuid(companyId) || !isUuid(memberId)) return Promise.resolve(null);
    return inTransaction(this.#pool, async (client) => {
      const locked = await lockForChange(client, companyId, memberId);
      if (!locked) return null;
      check(locked.member);
      const { rowCount } = await client.query(`delete from member_session where company_id = $1 and member_id = $2`, [companyId, memberId]);
      const ended = rowCount ?? 0;
      await insertAuditRow(client, companyId, { ...audit, details: { ...audit.details, ended }, targetType: "member", targetId: memberId }, new Date());
      return ended;
    });
  }

  createLink(companyId: string, memberId: string, link: { tokenHash: Buffer; expiresAt: Date }, audit: AuditNote | undefined): Promise<void> {
    return inTransaction(this.#pool, async (client) => {
      await client.query(`insert into sign_in_link (company_id, member_id, token_hash, expires_at) values ($1, $2, $3, $4)`, [
        companyId,
        memberId,
        link.tokenHash,
        link.expiresAt,
      ]);
      if (audit) await insertAuditRow(client, companyId, { ...audit, targetType: "member", targetId: memberId }, new Date());
    });
  }

  async claimEmailSlot(companyId: string, memberId: string, now: Date, notBefore: Date): Promise<boolean> {
    const pool = await this.#pool();
    const { rowCount } = await pool.query(
      `update member set last_link_emailed_at = $3
        where company_id = $1 and id = $2 and (last_link_emailed_at is null or last_link_emailed_at < $4)`,
      [companyId, memberId, now, notBefore],
    );
    return (rowCount ?? 0) > 0;
  }

  exchangeLink(linkHash: Buffer, now: Date, session: { secretHash: Buffer; expiresAt: Date }): Promise<SessionRecord | null> {
    return inTransaction(this.#pool, async (client) => {
      // Single use: the conditional update takes the link once, whoever races.
      const used = await client.query<{ company_id: string; member_id: string }>(
        `update sign_in_link l set used_at = $2
           from member m
          where l.token_hash = $1 and l.used_at is null and l.expires_at > $2
            and m.id = l.member_id and m.company_id = l.company_id and m.disabled_at is null
          returning l.company_id, l.member_id`,
        [linkHash, now],
      );
      const link = used.rows[0];
      if (!link) return null;
      await client.query(`update member set last_sign_in_at = $3 where company_id = $1 and id = $2`, [link.company_id, link.member_id, now]);
      const created = await client.query<{ id: string }>(
        `insert into member_session (company_id, member_id, secret_hash, created_at, last_seen_at, expires_at)
         values ($1, $2, $3, $4, $4, $5) returning id`,
        [link.company_id, link.member_id, session.secretHash, now, session.expiresAt],
      );
      const { rows } = await client.query<SessionRow>(`${SESSION_SELECT} where s.id = $1`, [created.rows[0]?.id]);
      return rows[0] ? sessionRecord(rows[0]) : null;
    });
  }

  async findSession(secretHash: Buffer, now: Date, idleMs: number, touchAfterMs: number): Promise<SessionRecord | null> {
    const pool = await this.#pool();
    const { rows } = await pool.query<SessionRow>({
      name: "member_session_authenticate",
      text: `${SESSION_SELECT} where s.secret_hash = $1 and s.expires_at > $2 and s.last_seen_at > $3 and m.disabled_at is null`,
      values: [secretHash, now, new Date(now.getTime() - idleMs)],
    });
    const row = rows[0];
    if (!row) return null;
    if (now.getTime() - toDate(row.last_seen_at).getTime() >= touchAfterMs) {
      await pool.query(`update member_session set last_seen_at = $2 where id = $1 and last_seen_at < $2`, [row.session_id, now]);
    }
    return sessionRecord(row);
  }

  async deleteSession(secretHash: Buffer): Promise<void> {
    const pool = await this.#pool();
    await pool.query(`delete from member_session where secret_hash = $1`, [secretHash]);
  }

  async deleteExpired(now: Date, idleMs: number): Promise<number> {
    const pool = await this.#pool();
    const sessions = await pool.query(`delete from member_session where expires_at <= $1 or last_seen_at <= $2`, [now, new Date(now.getTime() - idleMs)]);
    const links = await pool.query(`delete from sign_in_link where expires_at <= $1`, [new Date(now.getTime() - 86_400_000)]);
    return (sessions.rowCount ?? 0) + (links.rowCount ?? 0);
  }
}

/** Locks the company's active owners, then the member; answers the member and how many active owners there are. */
async function lockForChange(client: PoolClient, companyId: string, memberId: string): Promise<{ member: MemberRecord; activeOwners: number } | null> {
  const owners = await client.query(`select id from member where company_id = $1 and role = 'owner' and disabled_at is null order by id for update`, [
    companyId,
  ]);
  const { rows } = await client.query<MemberRow>(`select ${MEMBER_COLUMNS} from member m where m.company_id = $1 and m.id = $2 for update`, [
    companyId,
    memberId,
  ]);
  const row = rows[0];
  return row ? { member: memberRecord(row), activeOwners: owners.rowCount ?? 0 } : null;
}
