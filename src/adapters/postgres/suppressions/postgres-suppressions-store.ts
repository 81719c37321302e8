/**
 * Suppressed addresses in PostgreSQL, always per company (every statement
 * filters on company_id). Through MikroORM, each call on its own
 * EntityManager fork, but for `isListed`: it sits on the send path (every
 * accepted message, measured by the send benchmarks in bench/) and stays one
 * plain primary-key probe on the ORM's pool, outside the unit of work.
 * `add` is an INSERT ... ON CONFLICT DO NOTHING: the first reason wins, and
 * concurrent reports of one address cannot fail.
 */
import { LockMode, raw } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { containsPattern } from "../../../capabilities/contacts/filters.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import type {
  NewSuppression,
  SuppressionEntry,
  SuppressionFilters,
  SuppressionReason,
  SuppressionsStore,
} from "../../../capabilities/suppressions/ports.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";
import { SuppressionSchema, type Suppression } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { keysetRows } from "../keyset.ts";
import { poolOf, type Pool } from "../sql.ts";

function entryOf(row: Suppression): SuppressionEntry {
  // The table's check constraint admits only these reasons.
  return { email: row.email, reason: row.reason as SuppressionReason, messageId: row.messageId ?? null, createdAt: row.createdAt };
}

export class PostgresSuppressionsStore implements SuppressionsStore {
  readonly #orm: MikroORM;
  readonly #pool: () => Promise<Pool>;

  constructor(orm: MikroORM) {
    this.#orm = orm;
    this.#pool = poolOf(orm);
  }

  /** Plain SQL on the pool: one primary-key probe per accepted message, which the send benchmarks measure. */
  async isListed(companyId: string, email: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const pool = await this.#pool();
    const { rows } = await pool.query(`select 1 from suppression where company_id = $1 and email = $2`, [companyId, email]);
    return rows.length > 0;
  }

  async add(companyId: string, entry: NewSuppression): Promise<boolean> {
    return (await insertOnce(this.#orm.em.fork(), companyId, entry)) !== undefined;
  }

  async addAudited(companyId: string, entry: NewSuppression, audit: AuditNote): Promise<{ entry: SuppressionEntry; created: boolean }> {
    // A concurrent remove may delete the row the insert met before it is read: then insert again.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const outcome = await this.#orm.em.fork().transactional(async (em) => {
        const added = await insertOnce(em, companyId, entry);
        if (added) {
          // In the insert's transaction: the audit row exists exactly when this call listed the address.
          persistAuditRow(em, companyId, { ...audit, targetType: "suppression", targetId: added.email });
          await em.flush();
          return { entry: entryOf(added), created: true };
        }
        // Read committed: this statement sees the row the insert met once its writer committed.
        const found = await em.findOne(SuppressionSchema, { company: companyId, email: entry.email });
        return found ? { entry: entryOf(found), created: false } : undefined;
      });
      if (outcome) return outcome;
    }
    throw new Error("suppression: the address was removed and listed again three times while it was added");
  }

  async find(companyId: string, email: string): Promise<SuppressionEntry | undefined> {
    if (!isUuid(companyId)) return undefined;
    const found = await this.#orm.em.fork().findOne(SuppressionSchema, { company: companyId, email });
    return found ? entryOf(found) : undefined;
  }

  async list(companyId: string, filters: SuppressionFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<SuppressionEntry>[]> {
    if (!isUuid(companyId)) return [];
    const em = this.#orm.em.fork();
    const createdAt = {
      ...(filters.since !== undefined ? { $gte: filters.since } : {}),
      ...(filters.until !== undefined ? { $lt: filters.until } : {}),
    };
    const query = em
      .createQueryBuilder(SuppressionSchema, "s")
      .select("*")
      .where({
        company: companyId,
        ...(filters.reason !== undefined ? { reason: filters.reason } : {}),
        ...(Object.keys(createdAt).length > 0 ? { createdAt } : {}),
      })
      .orderBy({ createdAt: "desc", email: "desc" })
      .limit(limit);
    // Written out for the escape clause, which `$ilike` has no form for: the pattern's `\` escapes `%`, `_` and itself.
    if (filters.q !== undefined) query.andWhere(raw(`s.email ilike ? escape '\\'`, [containsPattern(filters.q)]));
    // Keyed by the address, as the index range (company_id, created_at desc, email desc) needs.
    const rows = await keysetRows(query, { created: "s.created_at", id: "s.email", idType: "text", direction: "<" }, after);
    return rows.map(({ row, position }) => ({ item: entryOf(em.map(SuppressionSchema, row)), position }));
  }

  async remove(companyId: string, email: string, decide: (entry: SuppressionEntry) => AuditNote): Promise<SuppressionEntry | undefined> {
    if (!isUuid(companyId)) return undefined;
    return this.#orm.em.fork().transactional(async (em) => {
      // Locked (`for update`) until the transaction ends: a concurrent remove waits, then finds nothing.
      const found = await em.findOne(SuppressionSchema, { company: companyId, email }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!found) return undefined;
      const entry = entryOf(found);
      // A decision that throws rolls the transaction back: nothing is deleted, no audit row is written.
      const audit = decide(entry);
      await em.nativeDelete(SuppressionSchema, { company: companyId, email });
      persistAuditRow(em, companyId, { ...audit, targetType: "suppression", targetId: entry.email });
      await em.flush();
      return entry;
    });
  }
}

/**
 * Lists the address unless it is listed already; the row when this
 * statement added it. `on conflict do nothing` rather than em.upsert: the
 * first reason wins, and of concurrent inserts one adds the row while the
 * others wait for it to commit and add nothing.
 */
async function insertOnce(em: EntityManager, companyId: string, entry: NewSuppression): Promise<Suppression | undefined> {
  const inserted = await em
    .createQueryBuilder(SuppressionSchema)
    .insert({ company: companyId, email: entry.email, reason: entry.reason, messageId: entry.messageId })
    .onConflict(["company", "email"])
    .ignore()
    .returning(["*"])
    .execute("run", false);
  const row = (inserted.rows as Record<string, unknown>[] | undefined)?.[0];
  return row ? em.map(SuppressionSchema, row) : undefined;
}
