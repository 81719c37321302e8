import type { AuditNote } from "../audit/types.ts";
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";
import type { ContactFilters } from "./filters.ts";
import type { ContactListRecord, ContactRecord, ContactState, ContactStatusName } from "./types.ts";

/**
 * What the contacts capability needs from storage. The PostgreSQL adapters
 * in src/adapters/postgres/contacts implement these. Every call is scoped by
 * company id.
 */

/** A `contact.updated` outbox row (spec: Event kinds), written with the change it reports. */
export interface ContactEventDraft {
  readonly event: "contact.updated";
  readonly occurredAt: Date;
  readonly data: Readonly<Record<string, unknown>>;
  /** Unique per change: the outbox records each change once. */
  readonly dedupeKey: string;
}

/** What a write does to a contact: its state afterwards, and the event that reports it (null: nothing changed). */
export interface ContactDecision {
  readonly state: ContactState;
  readonly event: ContactEventDraft | null;
  /**
   * Time of the change: created_at of a new contact, updated_at of a changed
   * one, the event's occurredAt. Taken when deciding, with the contact
   * locked, so the changes of one contact are stamped in the order they
   * commit.
   */
  readonly at: Date;
}

export interface ContactWriteRequest {
  readonly companyId: string;
  /** The matching key of the address (email.ts). */
  readonly key: string;
  /** The id a new contact gets. */
  readonly newId: string;
  /** The lists the write names (distinct): each must be a list of the company, checked in the write's transaction. */
  readonly listIds: readonly string[];
  /**
   * Called with the stored contact (locked until the write commits), or
   * with undefined for a new one; pure. May be called twice when a
   * concurrent write creates the contact first.
   */
  readonly decide: (current: ContactRecord | undefined) => ContactDecision;
}

export type ContactWriteOutcome =
  | { readonly kind: "written"; readonly contact: ContactRecord; readonly created: boolean }
  /** Some of `listIds` are not lists of the company: nothing was written. */
  | { readonly kind: "unknown-lists"; readonly listIds: readonly string[] };

export interface ContactStore {
  /**
   * Creates or updates the contact of `key` as `decide` says, with its
   * memberships and its event, in one transaction. Concurrent writes of one
   * address create one contact: the others update it.
   */
  write(request: ContactWriteRequest): Promise<ContactWriteOutcome>;
  /** `id` is a UUID. */
  findById(companyId: string, id: string): Promise<ContactRecord | undefined>;
  findByKey(companyId: string, key: string): Promise<ContactRecord | undefined>;
  /**
   * Up to `rows` contacts matching `filters`, newest first (created_at
   * desc, id desc), strictly after `after`, each with its position (for
   * the next page's cursor).
   */
  page(companyId: string, filters: ContactFilters, after: KeysetPosition | null, rows: number): Promise<Positioned<ContactRecord>[]>;
  /**
   * Sets the status of the contact of `key` to `status` if it is one of
   * `from`; true when it changed. No contact: false (none is created).
   */
  setStatusIf(companyId: string, key: string, status: ContactStatusName, from: readonly ContactStatusName[], at: Date): Promise<boolean>;
}

export interface ContactListStore {
  /** `taken`: the company has a list of that name (whatever its case). With `audit`, its audit row in the same transaction. */
  create(companyId: string, id: string, name: string, audit?: AuditNote): Promise<ContactListRecord | "taken">;
  /** undefined: no such list of the company. */
  rename(companyId: string, id: string, name: string, audit?: AuditNote): Promise<ContactListRecord | "taken" | undefined>;
  /** False when there was no such list of the company. Memberships go with it. */
  delete(companyId: string, id: string, audit?: AuditNote): Promise<boolean>;
  /** Oldest first. */
  list(companyId: string): Promise<ContactListRecord[]>;
  exists(companyId: string, id: string): Promise<boolean>;
}
