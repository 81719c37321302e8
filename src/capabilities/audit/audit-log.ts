import { filterFingerprint, KeysetPager, type Page, type PageRequest } from "../shared/paging.ts";
import type { AuditFilters, AuditLogStore } from "./ports.ts";
import type { AuditEventRecord } from "./types.ts";

/** The audit log is kept 400 days. */
export const AUDIT_RETENTION_DAYS = 400;
const DAY_MS = 86_400_000;

/** A page of the company's audit log, newest first. */
export interface ListAuditEventsCommand extends PageRequest {
  readonly companyId: string;
  readonly filters: AuditFilters;
}

export type ListAuditEventsResult = Page<AuditEventRecord>;

export interface AuditLogDependencies {
  readonly store: AuditLogStore;
  /** Signs the log's cursors (CURSOR_SECRET). */
  readonly cursorSecret: string;
  readonly clock: () => Date;
}

/** Reading the audit log (cursor pages, filters) and its retention. */
export class AuditLog {
  readonly #store: AuditLogStore;
  readonly #pager: KeysetPager;
  readonly #clock: () => Date;

  constructor(dependencies: AuditLogDependencies) {
    this.#store = dependencies.store;
    this.#clock = dependencies.clock;
    this.#pager = new KeysetPager(dependencies.cursorSecret, {
      context: "mail.v1.audit-log.cursor.v1",
      label: "audit log",
      filters: "actor, action and since",
    });
  }

  list(command: ListAuditEventsCommand): Promise<ListAuditEventsResult> {
    const { companyId, filters } = command;
    const fingerprint = filterFingerprint([filters.actor, filters.action, filters.since]);
    return this.#pager.read(companyId, fingerprint, command, (after, limit) => this.#store.list(companyId, filters, after, limit));
  }

  /** Deletes what is older than the retention (400 days); answers how many rows went. */
  purgeExpired(): Promise<number> {
    return this.#store.deleteOlderThan(new Date(this.#clock().getTime() - AUDIT_RETENTION_DAYS * DAY_MS));
  }
}
