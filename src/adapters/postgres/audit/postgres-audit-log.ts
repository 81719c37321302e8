import type { AuditFilters, AuditLogStore } from "../../../capabilities/audit/ports.ts";
import type { AuditActorKind, AuditEventRecord } from "../../../capabilities/audit/types.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { isUuid } from "../ids.ts";
import { afterPosition, positionText } from "../keyset.ts";
import { toDate, type Pool } from "../sql.ts";

interface AuditRow {
  id: string;
  company_id: string;
  occurred_at: string | Date;
  occurred_at_text: string;
  actor_kind: AuditActorKind;
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  request_id: string;
  client_ip: string;
  details: Record<string, unknown>;
}

/** The audit log's reads (keyset pages, one company) and its retention delete. */
export class PostgresAuditLog implements AuditLogStore {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async list(companyId: string, filters: AuditFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<AuditEventRecord>[]> {
    if (!isUuid(companyId)) return [];
    const values: unknown[] = [companyId];
    const where = ["company_id = $1"];
    if (filters.actor !== undefined) {
      values.push(filters.actor);
      where.push(`actor = $${values.length}`);
    }
    if (filters.action !== undefined) {
      values.push(filters.action);
      where.push(`action = $${values.length}`);
    }
    if (filters.since !== undefined) {
      values.push(filters.since);
      where.push(`occurred_at >= $${values.length}`);
    }
    if (after) {
      values.push(after.createdAt, after.id);
      where.push(afterPosition("occurred_at", "id", "<", `$${values.length - 1}`, `$${values.length}`));
    }
    values.push(limit);
    const pool = await this.#pool();
    const { rows } = await pool.query<AuditRow>(
      `select id, company_id, occurred_at,
              ${positionText("occurred_at")} as occurred_at_text,
              actor_kind, actor, action, target_type, target_id, request_id, client_ip, details
         from audit_event
        where ${where.join(" and ")}
        order by occurred_at desc, id desc
        limit $${values.length}`,
      values,
    );
    return rows.map((row) => ({
      item: {
        id: row.id,
        companyId: row.company_id,
        occurredAt: toDate(row.occurred_at),
        actorKind: row.actor_kind,
        actor: row.actor,
        action: row.action,
        targetType: row.target_type,
        targetId: row.target_id,
        requestId: row.request_id,
        clientIp: row.client_ip,
        details: row.details,
      },
      position: { createdAt: row.occurred_at_text, id: row.id },
    }));
  }

  async deleteOlderThan(cutoff: Date): Promise<number> {
    const pool = await this.#pool();
    const { rowCount } = await pool.query(`delete from audit_event where occurred_at < $1`, [cutoff]);
    return rowCount ?? 0;
  }
}
