import { randomUUID } from "node:crypto";
import { ApiError } from "../../contract/api-error.ts";
import { KeysetPager } from "../shared/paging.ts";
import { decidePendingConfirmation, type PendingDecisionKind } from "./confirm-pending.ts";
import { decideWrite } from "./decide-write.ts";
import { contactEmail } from "./email.ts";
import { CONTACT_CURSOR, contactFiltersFingerprint, isUuid, parseListQuery } from "./filters.ts";
import type { ContactListStore, ContactStore } from "./ports.ts";
import { isKeptStatus } from "./status-rules.ts";
import type {
  ConfirmPendingCommand,
  ConfirmPendingResult,
  ContactPage,
  ContactRecord,
  ContactStatusName,
  GetContactCommand,
  ListContactsCommand,
  MarkFromSuppressionCommand,
  SuppressionReason,
  UnsubscribeContactCommand,
  UnsubscribeContactResult,
  UpsertContactCommand,
  UpsertContactResult,
} from "./types.ts";
import { decideUnsubscribe, type UnsubscribeDecisionKind } from "./unsubscribe.ts";
import { validateContactWrite } from "./validate-write.ts";

export interface ContactsDependencies {
  readonly contacts: ContactStore;
  /** Where a list filter's list is looked up. */
  readonly lists: ContactListStore;
  /** HMAC key of the list cursors. Changing it invalidates cursors in flight. */
  readonly cursorSecret: string;
  /** The time of the writes; the system clock when absent. */
  readonly clock?: (() => Date) | undefined;
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

/** The contacts of a company (spec: Contact; POST/GET /mail/v1/contacts). */
export class Contacts {
  readonly #deps: ContactsDependencies;
  readonly #pager: KeysetPager;
  readonly #clock: () => Date;

  constructor(deps: ContactsDependencies) {
    this.#deps = deps;
    this.#pager = new KeysetPager(deps.cursorSecret, CONTACT_CURSOR);
    this.#clock = deps.clock ?? (() => new Date());
  }

  /**
   * Creates or updates the contact of `command.email` (matched by its
   * normalised address). 400 VALIDATION_ERROR naming every bad field;
   * 404 NOT_FOUND when a listId is not a list of the company.
   */
  async upsert(command: UpsertContactCommand): Promise<UpsertContactResult> {
    const valid = validateContactWrite(command, this.#clock());
    // An id that is not a UUID names no list: the same 404 as an unknown one, without asking the database.
    const malformed = (valid.listIds ?? []).filter((id) => !isUuid(id));
    if (malformed.length > 0) throw listNotFound(malformed);

    const context = { newId: randomUUID(), writeId: randomUUID(), source: command.source ?? "api" };
    const outcome = await this.#deps.contacts.write({
      companyId: command.companyId,
      key: valid.key,
      newId: context.newId,
      listIds: valid.listIds ?? [],
      decide: (current) => decideWrite(valid, current, context, this.#clock()),
    });
    if (outcome.kind === "unknown-lists") throw listNotFound(outcome.listIds);
    const { contact, created } = outcome;
    return { contact, created, marketable: contact.status === "subscribed" };
  }

  /** By id (UUID) or by email address (any spelling); NOT_FOUND when unknown or another company's. */
  async get(command: GetContactCommand): Promise<ContactRecord> {
    const value = command.idOrEmail.trim();
    let found: ContactRecord | undefined;
    if (isUuid(value)) {
      found = await this.#deps.contacts.findById(command.companyId, value.toLowerCase());
    } else {
      // Anything else is an address; one that cannot be one names no contact.
      const email = contactEmail(value);
      if (email.ok) found = await this.#deps.contacts.findByKey(command.companyId, email.key);
    }
    if (!found) throw contactNotFound();
    return found;
  }

  /** A page of the company's contacts, newest first (created_at desc, id desc). */
  async list(command: ListContactsCommand): Promise<ContactPage> {
    const { companyId } = command;
    const { limit, filters } = parseListQuery(command);
    if (filters.listId !== undefined && !(isUuid(filters.listId) && (await this.#deps.lists.exists(companyId, filters.listId)))) {
      throw listNotFound([filters.listId]);
    }
    const fingerprint = contactFiltersFingerprint(filters);
    // An empty cursor is what a REST client sends for "?cursor=": the first page.
    const after = this.#pager.after(companyId, fingerprint, command.cursor);
    const rows = await this.#deps.contacts.page(companyId, filters, after, limit + 1);
    return this.#pager.page(companyId, fingerprint, rows, limit);
  }

  /**
   * What the sending lifecycle reports: a hard bounce (`bounce`), a
   * complaint (`complaint`) or an operator's suppression (`manual`) moves
   * the company's contact of that address to `bounced`, `complained` or
   * `suppressed`, unless it already has one of those (the first one stays).
   * No contact: nothing happens (none is created). True when it changed.
   */
  async markFromSuppression(command: MarkFromSuppressionCommand): Promise<boolean> {
    const { companyId, email } = command;
    if (!isUuid(companyId)) return false;
    const checked = contactEmail(email);
    // The suppression list's own fallback (suppressions/normalize.ts): an address our check refuses is matched lower-cased.
    const key = checked.ok ? checked.key : email.trim().toLowerCase();
    if (key === "") return false;
    return this.#deps.contacts.setStatusIf(companyId, key, STATUS_OF_SUPPRESSION[command.reason], API_STATUSES, this.#clock());
  }

  /**
   * The confirmation of a pending contact (double opt-in; confirm-pending.ts
   * has the rules): a `pending` contact becomes `subscribed` with the
   * confirmation's consent and one `contact.updated` event, through the
   * store's one write path. Anything else is left as it is.
   */
  async confirmPending(command: ConfirmPendingCommand): Promise<ConfirmPendingResult> {
    const { companyId } = command;
    if (!isUuid(companyId) || !isUuid(command.contactId)) return { kind: "not-found" };
    const found = await this.#deps.contacts.findById(companyId, command.contactId.toLowerCase());
    if (!found) return { kind: "not-found" };
    if (found.status !== "pending") return { kind: isKeptStatus(found.status) ? "kept" : "already-subscribed", contact: found };

    const checked = contactEmail(found.email);
    const writeId = randomUUID();
    let kind: PendingDecisionKind = "already-subscribed";
    const outcome = await this.#deps.contacts.write({
      companyId,
      key: checked.ok ? checked.key : found.email.toLowerCase(),
      // The store offers every write an insert first. Contacts are never
      // deleted, so the row is there and the insert does nothing; were it
      // gone, it would come back as it was read, with its own id.
      newId: found.id,
      // Memberships are not touched (the state keeps the contact's lists).
      listIds: [],
      decide: (current) => {
        const decided = decidePendingConfirmation(current ?? found, command, writeId, this.#clock());
        kind = decided.kind;
        return decided.decision;
      },
    });
    if (outcome.kind !== "written") throw new Error("a confirmation names no list");
    return { kind, contact: outcome.contact };
  }

  /**
   * A recipient's own unsubscribe (unsubscribe.ts has the rules): a
   * `subscribed` or `pending` contact becomes `unsubscribed` with the
   * unsubscribe as its consent evidence and one `contact.updated` event,
   * through the store's one write path. Anything else is left as it is.
   */
  async unsubscribe(command: UnsubscribeContactCommand): Promise<UnsubscribeContactResult> {
    const { companyId } = command;
    if (!isUuid(companyId) || !isUuid(command.contactId)) return { kind: "not-found" };
    const found = await this.#deps.contacts.findById(companyId, command.contactId.toLowerCase());
    if (!found) return { kind: "not-found" };
    if (found.status !== "subscribed" && found.status !== "pending") {
      return { kind: found.status === "unsubscribed" ? "already-unsubscribed" : "kept", contact: found };
    }
    const checked = contactEmail(found.email);
    const writeId = randomUUID();
    let kind: UnsubscribeDecisionKind = "already-unsubscribed";
    const outcome = await this.#deps.contacts.write({
      companyId,
      key: checked.ok ? checked.key : found.email.toLowerCase(),
      // As confirmPending: the row is there, the insert the store offers first does nothing.
      newId: found.id,
      listIds: [],
      decide: (current) => {
        const decided = decideUnsubscribe(current ?? found, command, writeId, this.#clock());
        kind = decided.kind;
        return decided.decision;
      },
    });
    if (outcome.kind !== "written") throw new Error("an unsubscribe names no list");
    return { kind, contact: outcome.contact };
  }
}
