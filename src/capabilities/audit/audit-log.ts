import { createKeysetCursorCodec, type KeysetCursorCodec } from "../shared/keyset-cursor.ts";
import { ValidationError } from "../../contract/api-error.ts";
import type { AuditFilters, AuditLogStore } from "./ports.ts";
import type { AuditEventRecord } from "./types.ts";

/** The audit log is kept 400 days. */
export const AUDIT_RETENTION_DAYS = 400;
const DAY_MS = 86_400_000;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 100;

export interface ListAuditEventsCommand {
  readonly companyId: string;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
  readonly filters: AuditFilters;
}

export interface ListAuditEventsResult {
  readonly items: readonly AuditEventRecord[];
  readonly nextCursor: string | undefined;
}

export interface AuditLogOptions {
  readonly store: AuditLogStore;
  readonly cursorSecret: string;
  readonly clock: () => Date;
}

/** Reading the audit log (cursor pages, filters) and its retention. */
export class AuditLog {
  readonly #store: AuditLogStore;
  readonly #cursors: KeysetCursorCodec;
  readonly #clock: () => Date;

  constructor(options: AuditLogOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#cursors = createKeysetCursorCodec(options.cursorSecret, {
      context: "mail.v1.audit-log.cursor.v1",
      label: "audit log",
      filters: "actor, action and since",
    });
  }

  async list(command: ListAuditEventsCommand): Promise<ListAuditEventsResult> {
    const limit = command.limit ?? DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      throw new ValidationError([{ field: "limit", problem: `must be 1 to ${MAX_LIMIT}` }]);
    }
    const fingerprint = JSON.stringify([command.filters.actor ?? null, command.filters.action ?? null, command.filters.since?.toISOString() ?? null]);
    const after = command.cursor ? this.#cursors.decode(command.cursor, command.companyId, fingerprint) : undefined;
    const rows = await this.#store.list(command.companyId, command.filters, after, limit + 1);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    const nextCursor =
      rows.length > limit && last ? this.#cursors.encode(command.companyId, fingerprint, { createdAt: last.occurredAtText, id: last.id }) : undefined;
    return { items, nextCursor };
  }

  /** Deletes what is older than the retention (400 days); answers how many rows went. */
  purgeExpired(): Promise<number> {
    return this.#store.deleteOlderThan(new Date(this.#clock().getTime() - AUDIT_RETENTION_DAYS * DAY_MS));
  }
}
