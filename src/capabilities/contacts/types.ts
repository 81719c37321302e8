import type { AuditContext } from "../audit/types.ts";
import type { Page, PageRequest } from "../shared/paging.ts";

/**
 * The contacts capability's vocabulary (spec: Contact, Contact status rules).
 * Records are what the use cases hand out: never a row or an entity.
 */

/** Every contact status once; a Record so that the compiler notices a new one. */
const STATUSES = {
  subscribed: true,
  pending: true,
  unsubscribed: true,
  suppressed: true,
  bounced: true,
  complained: true,
} as const;

export type ContactStatusName = keyof typeof STATUSES;

/** The contact statuses, in the contract's order. */
export const CONTACT_STATUSES = Object.keys(STATUSES) as readonly ContactStatusName[];

/** What a write may ask for; the other three are set by the service only. */
export const WRITABLE_STATUSES = ["subscribed", "pending", "unsubscribed"] as const satisfies readonly ContactStatusName[];

export type WritableStatus = (typeof WRITABLE_STATUSES)[number];

export function isContactStatus(value: string): value is ContactStatusName {
  return Object.hasOwn(STATUSES, value);
}

export function isWritableStatus(value: string): value is WritableStatus {
  return (WRITABLE_STATUSES as readonly string[]).includes(value);
}

/** An attribute value: flat, scalar. */
export type AttributeValue = string | number | boolean | null;

export interface ConsentRecord {
  readonly source: string;
  readonly at: Date;
  readonly reference: string | null;
}

/** Everything about a contact that a write can change, as stored. */
export interface ContactState {
  /** The address as last written (trimmed, domain in A-label form). */
  readonly email: string;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly company: string | null;
  /** E.164. */
  readonly phone: string | null;
  /** Canonical BCP 47. */
  readonly locale: string | null;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly tags: readonly string[];
  /** Ids of the lists it belongs to, sorted. */
  readonly listIds: readonly string[];
  readonly status: ContactStatusName;
  readonly consent: ConsentRecord | null;
}

/** A stored contact. */
export interface ContactRecord extends ContactState {
  readonly id: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/**
 * A contact write as the caller sent it (the transport's mapping of the
 * request; unvalidated). `undefined` is "not sent": the stored value stays.
 */
export interface ContactWrite {
  readonly email: string;
  readonly firstName?: string | undefined;
  readonly lastName?: string | undefined;
  readonly company?: string | undefined;
  readonly phone?: string | undefined;
  readonly locale?: string | undefined;
  /** Any JSON object; checked to be flat. */
  readonly attributes?: Readonly<Record<string, unknown>> | undefined;
  /** Any JSON array; checked to hold strings. */
  readonly tags?: readonly unknown[] | undefined;
  readonly listIds?: readonly unknown[] | undefined;
  /** A contact status name (`subscribed`, ...). */
  readonly status?: string | undefined;
  readonly consent?: ConsentWrite | undefined;
}

export interface ConsentWrite {
  readonly source?: string | undefined;
  readonly at?: Date | undefined;
  readonly reference?: string | undefined;
}

/**
 * Who made a change: the `source` of its `contact.updated` event (spec:
 * Event kinds: `api`, `form` or the integration). `api` for POST
 * /mail/v1/contacts, `form` for a hosted sign-up form, `integration:<id>`
 * for a connected store (its integration id).
 */
export type ChangeSource = "api" | "form" | `integration:${string}`;

/** POST /mail/v1/contacts: the write, for the company, by `source` (`api` when absent). */
export interface UpsertContactCommand extends ContactWrite {
  readonly companyId: string;
  /** Who writes: the `source` of the `contact.updated` event. The status rules are the same for every source. */
  readonly source?: ChangeSource | undefined;
}

/** The answer of POST /mail/v1/contacts: the contact plus `created` and `marketable`. */
export interface UpsertContactResult {
  readonly contact: ContactRecord;
  /** True for a new contact. */
  readonly created: boolean;
  /** True only when the status is `subscribed`. */
  readonly marketable: boolean;
}

/** GET /mail/v1/contacts/{id}: by id (a UUID) or by address (any spelling). */
export interface GetContactCommand {
  readonly companyId: string;
  readonly idOrEmail: string;
}

/** GET /mail/v1/contacts: a page of the company's contacts, as the caller asked (validated by the use case). */
export interface ListContactsCommand extends PageRequest {
  readonly companyId: string;
  readonly status?: string | undefined;
  /** Part of the address, first or last name, case-insensitive. */
  readonly q?: string | undefined;
  readonly tag?: string | undefined;
  readonly listId?: string | undefined;
}

export type ContactPage = Page<ContactRecord>;

/** What a hard bounce, a complaint or an operator's suppression does to the contact. */
export type SuppressionReason = "bounce" | "complaint" | "manual";

/** The sending lifecycle reports a suppression of `email` for `reason`. */
export interface MarkFromSuppressionCommand {
  readonly companyId: string;
  readonly email: string;
  readonly reason: SuppressionReason;
}

/** The double opt-in confirms a pending contact with the confirmation's consent. */
export interface ConfirmPendingCommand {
  readonly companyId: string;
  readonly contactId: string;
  readonly consent: ConsentRecord;
  /** `source` of the `contact.updated` event (`form` for a hosted form). */
  readonly eventSource: ChangeSource;
}

/** How a recipient unsubscribed: the List-Unsubscribe one-click POST, the footer page's button, mail to the mailto address. */
export type UnsubscribeMethod = "one-click" | "page" | "mailto";

/** A recipient's own unsubscribe (unsubscribe.ts has the rules). */
export interface UnsubscribeContactCommand {
  readonly companyId: string;
  readonly contactId: string;
  readonly method: UnsubscribeMethod;
  /** What the unsubscribe came from, kept with the evidence (e.g. `campaign:<id>`). */
  readonly reference: string | null;
}

export type UnsubscribeContactResult =
  | { readonly kind: "unsubscribed"; readonly contact: ContactRecord }
  | { readonly kind: "already-unsubscribed"; readonly contact: ContactRecord }
  /** Suppressed, bounced or complained: kept as it is. */
  | { readonly kind: "kept"; readonly contact: ContactRecord }
  | { readonly kind: "not-found" };

export type ConfirmPendingResult =
  | { readonly kind: "subscribed"; readonly contact: ContactRecord }
  | { readonly kind: "already-subscribed"; readonly contact: ContactRecord }
  /** The contact has a status the confirmation may not overwrite. */
  | { readonly kind: "kept"; readonly contact: ContactRecord }
  | { readonly kind: "not-found" };

/** A contact list. */
export interface ContactListRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Contacts that belong to it, whatever their status. */
  readonly memberCount: number;
}

/** ListsService CreateContactList: `audit` is who acts (the change's audit row is written in its transaction). */
export interface CreateContactListCommand {
  readonly companyId: string;
  readonly name: string;
  readonly audit: AuditContext;
}

export interface RenameContactListCommand {
  readonly companyId: string;
  readonly id: string;
  readonly name: string;
  readonly audit: AuditContext;
}

export interface DeleteContactListCommand {
  readonly companyId: string;
  readonly id: string;
  readonly audit: AuditContext;
}

export interface ListContactListsCommand {
  readonly companyId: string;
}
