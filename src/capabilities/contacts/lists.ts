import { randomUUID } from "node:crypto";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { exceedsCodePoints } from "../messages/compose/text-rules.ts";
import { isUuid } from "./filters.ts";
import type { ContactListStore } from "./ports.ts";
import type {
  ContactListRecord,
  CreateContactListCommand,
  DeleteContactListCommand,
  ListContactListsCommand,
  RenameContactListCommand,
} from "./types.ts";

export const MAX_LIST_NAME = 100;

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "list not found");
}

function taken(): ValidationError {
  return new ValidationError([{ field: "name", problem: "is taken: the company has a list of that name" }]);
}

/** Trimmed; 1 to 100 characters, without NUL. */
function listName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw new ValidationError([{ field: "name", problem: "is required" }]);
  if (exceedsCodePoints(trimmed, MAX_LIST_NAME) || trimmed.includes("\0")) {
    throw new ValidationError([{ field: "name", problem: `must be at most ${MAX_LIST_NAME} characters, without NUL` }]);
  }
  return trimmed;
}

/**
 * The contact lists of a company (ListsService). Membership is written with
 * the contact (listIds). Each change writes its audit row in its own
 * transaction.
 */
export class ContactLists {
  readonly #store: ContactListStore;

  constructor(deps: { readonly store: ContactListStore }) {
    this.#store = deps.store;
  }

  /** 400 VALIDATION_ERROR naming `name` when it is blank, too long or taken (case-insensitively). */
  async create(command: CreateContactListCommand): Promise<ContactListRecord> {
    const name = listName(command.name);
    const created = await this.#store.create(command.companyId, randomUUID(), name, { context: command.audit, action: "contact_list.created", details: { name } });
    if (created === "taken") throw taken();
    return created;
  }

  /** NOT_FOUND for an unknown or another company's list. */
  async rename(command: RenameContactListCommand): Promise<ContactListRecord> {
    const name = listName(command.name);
    if (!isUuid(command.id)) throw notFound();
    const renamed = await this.#store.rename(command.companyId, command.id.toLowerCase(), name, {
      context: command.audit,
      action: "contact_list.renamed",
      details: { name },
    });
    if (renamed === undefined) throw notFound();
    if (renamed === "taken") throw taken();
    return renamed;
  }

  /** Deletes the list and its memberships (the contacts stay). NOT_FOUND for an unknown or another company's list. */
  async delete(command: DeleteContactListCommand): Promise<void> {
    const note = { context: command.audit, action: "contact_list.deleted" as const, details: {} };
    if (!isUuid(command.id) || !(await this.#store.delete(command.companyId, command.id.toLowerCase(), note))) throw notFound();
  }

  /** Oldest first. */
  list(command: ListContactListsCommand): Promise<ContactListRecord[]> {
    return this.#store.list(command.companyId);
  }
}
