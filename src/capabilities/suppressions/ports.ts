import type { AuditNote } from "../audit/types.ts";
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";

/**
 * What the suppressions capability needs from storage. The PostgreSQL
 * implementation is src/adapters/postgres/suppressions/postgres-suppressions-store.ts.
 *
 * TENANT ISOLATION: every method takes the company id first and sees that
 * company's list only. Addresses arrive normalised (suppressionKey()); the
 * store compares them as they are.
 */
export type SuppressionReason = "bounce" | "complaint" | "manual";

export interface SuppressionEntry {
  readonly email: string;
  readonly reason: SuppressionReason;
  readonly messageId: string | null;
  readonly createdAt: Date;
}

export interface NewSuppression {
  readonly email: string;
  readonly reason: SuppressionReason;
  readonly messageId: string | null;
}

/** A list query's filters, validated: `q` a part of the address, the time window [since, until). */
export interface SuppressionFilters {
  readonly q?: string | undefined;
  readonly reason?: SuppressionReason | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
}

export interface SuppressionsStore {
  isListed(companyId: string, email: string): Promise<boolean>;
  /**
   * Adds the address unless it is listed already (the entry there stays as
   * it is, also under concurrent adds); true when this call added it.
   */
  add(companyId: string, entry: NewSuppression): Promise<boolean>;
  /**
   * The same, with `audit` written in the addition's transaction (only when
   * this call added it); answers the entry as it is now.
   */
  addAudited(companyId: string, entry: NewSuppression, audit: AuditNote): Promise<{ readonly entry: SuppressionEntry; readonly created: boolean }>;
  find(companyId: string, email: string): Promise<SuppressionEntry | undefined>;
  /**
   * The company's entries matching `filters`, newest first (created_at,
   * then email, descending), strictly after `after`; at most `limit`, each
   * with its position (the email is the position's id).
   */
  list(companyId: string, filters: SuppressionFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<SuppressionEntry>[]>;
  /**
   * Removes the address in one transaction: the entry is locked and shown to
   * `decide`, which answers the audit row to write with the removal (or
   * throws, and nothing changes). Undefined when the address is not listed.
   */
  remove(companyId: string, email: string, decide: (entry: SuppressionEntry) => AuditNote): Promise<SuppressionEntry | undefined>;
}
