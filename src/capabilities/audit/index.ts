export type { AuditAction, AuditActor, AuditActorKind, AuditContext, AuditEntry, AuditEventRecord, AuditNote } from "./types.ts";
export { OPERATOR_ACTOR } from "./types.ts";
export type { AuditFilters, AuditLogStore } from "./ports.ts";
export { AUDIT_RETENTION_DAYS, AuditLog, type AuditLogDependencies, type ListAuditEventsCommand, type ListAuditEventsResult } from "./audit-log.ts";
