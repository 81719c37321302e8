import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";
import type { AuditEventRecord } from "./types.ts";

export interface AuditFilters {
  readonly actor?: string;
  readonly action?: string;
  readonly since?: Date;
}

/** Reads and trims the audit log. Writes happen inside the stores of the changes (same transaction). */
export interface AuditLogStore {
  /** Newest first, strictly before `after` when given; at most `limit` rows; one company only. */
  list(companyId: string, filters: AuditFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<AuditEventRecord>[]>;
  /** Deletes rows older than `cutoff` (every company); answers how many. */
  deleteOlderThan(cutoff: Date): Promise<number>;
}
