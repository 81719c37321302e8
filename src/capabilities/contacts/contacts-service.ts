import { randomUUID } from "node:crypto";
import { ApiError } from "../../contract/api-error.ts";
import { createContactCursorCodec } from "./cursor.ts";
import { decideWrite } from "./decide-write.ts";
import { contactEmail } from "./email.ts";
import { filterFingerprint, isUuid, parseListOptions } from "./filters.ts";
import type { ContactListStore, ContactStore } from "./ports.ts";
import type {
  ContactPage,
  ContactRecord,
  ContactStatusName,
  ContactWrite,
  ListContactsOptions,
  SuppressionReason,
  UpsertAnswer,
  WriteOrigin,
} from "./types.ts";
import { validateContactWrite } from "./validate-write.ts";

/** The contacts of a company (spec: Contact; POST/GET /mail/v1/contacts). */
export interface Contacts {
  /**
   * Creates or updates the contact of `write.email` (matched by its
   * normalised address). 400 VALIDATION_ERROR naming every bad field;
   * 404 NOT_FOUND when a listId is not a list of the company. `origin`
   * names who writes (the `source` of the `contact.updated` event; `api`
   * when absent): the status rules are the same for every source.
   */
  upsertContact(companyId: string, write: ContactWrite, origin?: WriteOrigin): Promise<UpsertAnswer>;
  /** By id (UUID) or by email address (any spelling); NOT_FOUND when unknown or another company's. */
  getContact(companyId: string, idOrEmail: string): Promise<ContactRecord>;
  /** A page of the company's contacts, newest first (created_at desc, id desc). */
  listContacts(companyId: string, options?: ListContactsOptions): Promise<ContactPage>;
  /**
   * What the sending lifecycle reports: a hard bounce (`bounce`), a
   * complaint (`complaint`) or an operator's suppression (`manual`) moves
   * the company's contact of that address to `bounced`, `complained` or
   * `suppressed`, unless it already has one of those (the first one stays).
   * No contact: nothing happens (none is created). True when it changed.
   */
  markContactFromSuppression(companyId: string, email: string, reason: SuppressionReason): Promise<boolean>;
}

export interface ContactsDependencies {
  readonly contacts: ContactStore;
  readonly lists: ContactListStore;
}

export interface ContactsOptions {
  /** HMAC key of the list cursors. Changing it invalidates cursors in flight. */
  readonly cursorSecret: string;
  readonly now?: () => Date;
}

const STATUS_OF_SUPPRESSION: Readonly<Record<SuppressionReason, ContactStatusName>> = {
  bounce: "bounced",
  complaint: "complained",
  manual: "suppressed",
};

/** The statuses a suppression may replace: those the API sets. */
const API_STATUSES: readonly ContactStatusName[] = ["subscribed", "pending", "unsubscribed"];

function contactNotFound(): ApiError {
  return new ApiError("NOT_FOUND", "contact not found");
}

function listNotFound(ids: readonly string[]): ApiError {
  return new ApiError("NOT_FOUND", `list not found: ${ids.join(", ")}`);
}

export function createContacts(deps: ContactsDependencies, options: ContactsOptions): Contacts {
  const cursors = createContactCursorCodec(options.cursorSecret);
  const now = options.now ?? (() => new Date());

  return {
    async upsertContact(companyId, write, origin = {}) {
      const valid = validateContactWrite(write, now());
      // An id that is not a UUID names no list: the same 404 as an unknown one, without asking the database.
      const malformed = (valid.listIds ?? []).filter((id) => !isUuid(id));
      if (malformed.length > 0) throw listNotFound(malformed);

      const context = { newId: randomUUID(), writeId: randomUUID(), source: origin.source ?? "api" };
      const outcome = await deps.contacts.write({
        companyId,
        key: valid.key,
        newId: context.newId,
        listIds: valid.listIds ?? [],
        decide: (current) => decideWrite(valid, current, context, now()),
      });
      if (outcome.kind === "unknown-lists") throw listNotFound(outcome.listIds);
      const { contact, created } = outcome;
      return { contact, created, marketable: contact.status === "subscribed" };
    },

    async getContact(companyId, idOrEmail) {
      const value = idOrEmail.trim();
      let found: ContactRecord | undefined;
      if (isUuid(value)) {
        found = await deps.contacts.findById(companyId, value.toLowerCase());
      } else {
        // Anything else is an address; one that cannot be one names no contact.
        const email = contactEmail(value);
        if (email.ok) found = await deps.contacts.findByKey(companyId, email.key);
      }
      if (!found) throw contactNotFound();
      return found;
    },

    async listContacts(companyId, listOptions = {}) {
      const { limit, filters } = parseListOptions(listOptions);
      if (filters.listId !== undefined && !(isUuid(filters.listId) && (await deps.lists.exists(companyId, filters.listId)))) {
        throw listNotFound([filters.listId]);
      }
      const fingerprint = filterFingerprint(filters);
      // An empty cursor is what a REST client sends for "?cursor=": the first page.
      const after = listOptions.cursor ? cursors.decode(listOptions.cursor, companyId, fingerprint) : null;
      const { items, more } = await deps.contacts.page(companyId, filters, after, limit);
      const last = items.at(-1);
      return {
        items: items.map((item) => item.record),
        nextCursor: more && last ? cursors.encode(companyId, fingerprint, last.position) : null,
      };
    },

    async markContactFromSuppression(companyId, email, reason) {
      const status = STATUS_OF_SUPPRESSION[reason];
      if (!isUuid(companyId)) return false;
      const checked = contactEmail(email);
      // The suppression list's own fallback (suppressions/normalize.ts): an address our check refuses is matched lower-cased.
      const key = checked.ok ? checked.key : email.trim().toLowerCase();
      if (key === "") return false;
      return deps.contacts.setStatusIf(companyId, key, status, API_STATUSES, now());
    },
  };
}
