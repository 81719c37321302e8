import type { EntityManager } from "@mikro-orm/postgresql";
import type { AuditEntry, AuditNote } from "../../../capabilities/audit/types.ts";
import { AuditEventSchema, CompanySchema } from "../entities/index.ts";
import type { PoolClient } from "../sql.ts";

/**
 * Writes one audit row on the connection of the change's transaction: the
 * row exists exactly when the change does. Every store that makes an
 * administrative change calls this inside its transaction.
 */
export async function insertAuditRow(client: Pick<PoolClient, "query">, companyId: string, entry: AuditEntry, at: Date): Promise<void> {
  await client.query(
    `insert into audit_event (company_id, occurred_at, actor_kind, actor, action, target_type, target_id, request_id, client_ip, details)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)`,
    [
      companyId,
      at,
      entry.context.actor.kind,
      entry.context.actor.label,
      entry.action,
      entry.targetType,
      entry.targetId,
      entry.context.requestId,
      entry.context.clientIp,
      JSON.stringify(entry.details),
    ],
  );
}

/**
 * The same through MikroORM: the audit row is persisted by the change's own
 * flush (one transaction) on the EntityManager that makes the change. `at`:
 * when the change happened, for a change that carries its own time (now
 * otherwise).
 */
export function persistAuditRow(em: EntityManager, companyId: string, entry: AuditEntry, at: Date = new Date()): void {
  em.create(AuditEventSchema, {
    company: em.getReference(CompanySchema, companyId),
    occurredAt: at,
    actorKind: entry.context.actor.kind,
    actor: entry.context.actor.label,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    requestId: entry.context.requestId,
    clientIp: entry.context.clientIp,
    details: { ...entry.details },
  });
}

/**
 * For a single SQL statement that writes its own audit row (`insert into
 * audit_event ... select ... where $n::text is not null`): the audit columns
 * of a change in order (actor kind, actor, action, request id, client
 * address, details as JSON), or six nulls when no row is wanted.
 */
export function auditValues(audit: AuditNote | undefined): unknown[] {
  if (!audit) return [null, null, null, null, null, null];
  const { actor, requestId, clientIp } = audit.context;
  return [actor.kind, actor.label, audit.action, requestId, clientIp, JSON.stringify(audit.details)];
}
