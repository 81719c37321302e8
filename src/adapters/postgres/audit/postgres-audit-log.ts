import type { MikroORM } from "@mikro-orm/postgresql";
import type { AuditFilters, AuditLogStore } from "../../../capabilities/audit/ports.ts";
import type { AuditActorKind, AuditEventRecord } from "../../../capabilities/audit/types.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { AuditEventSchema } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { keysetRows } from "../keyset.ts";

/** The audit log's reads (keyset pages, one company) and its retention delete, through MikroORM. */
export class PostgresAuditLog implements AuditLogStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async list(companyId: string, filters: AuditFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<AuditEventRecord>[]> {
    if (!isUuid(companyId)) return [];
    const em = this.#orm.em.fork();
    const query = em
      .createQueryBuilder(AuditEventSchema, "a")
      .select("*")
      .where({
        company: companyId,
        ...(filters.actor !== undefined ? { actor: filters.actor } : {}),
        ...(filters.action !== undefined ? { action: filters.action } : {}),
        ...(filters.since !== undefined ? { occurredAt: { $gte: filters.since } } : {}),
      })
      .orderBy({ occurredAt: "desc", id: "desc" })
      .limit(limit);
    const rows = await keysetRows(query, { created: "a.occurred_at", id: "a.id", direction: "<" }, after);
    return rows.map(({ row, position }) => {
      const event = em.map(AuditEventSchema, row);
      return {
        item: {
          id: event.id,
          companyId: event.company.id,
          occurredAt: event.occurredAt,
          // The column's check constraint admits only the actor kinds.
          actorKind: event.actorKind as AuditActorKind,
          actor: event.actor,
          action: event.action,
          targetType: event.targetType,
          targetId: event.targetId,
          requestId: event.requestId,
          clientIp: event.clientIp,
          details: event.details,
        },
        position,
      };
    });
  }

  deleteOlderThan(cutoff: Date): Promise<number> {
    return this.#orm.em.fork().nativeDelete(AuditEventSchema, { occurredAt: { $lt: cutoff } });
  }
}
