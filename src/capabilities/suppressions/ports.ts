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

export interface SuppressionsStore {
  /** Whether the company exists (an id that cannot be a row id: false). */
  companyExists(companyId: string): Promise<boolean>;
  isListed(companyId: string, email: string): Promise<boolean>;
  /**
   * Adds the address unless it is listed already (the entry there stays as
   * it is, also under concurrent adds); true when this call added it.
   */
  add(companyId: string, entry: NewSuppression): Promise<boolean>;
  /** The company's entries, newest first. */
  list(companyId: string): Promise<SuppressionEntry[]>;
  /** True when the address was listed. */
  remove(companyId: string, email: string): Promise<boolean>;
}
