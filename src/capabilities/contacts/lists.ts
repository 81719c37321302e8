import { randomUUID } from "node:crypto";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { exceedsCodePoints } from "../messages/compose/text-rules.ts";
import { isUuid } from "./filters.ts";
import type { AuditContext } from "../audit/types.ts";
import type { ContactListStore } from "./ports.ts";
import type { ContactListRecord } from "./types.ts";

export const MAX_LIST_NAME = 100;

/** The contact lists of a company (ListsService). Membership is written with the contact (listIds). */
export interface ContactLists {
  /**
   * 400 VALIDATION_ERROR naming `name` when it is blank, too long or taken (case-insensitively).
   * With `audit` (who acts), the change's audit row is written in its transaction; so for rename and delete.
   */
  create(companyId: string, name: string, audit?: AuditContext): Promise<ContactListRecord>;
  /** NOT_FOUND for an unknown or another company's list. */
  rename(companyId: string, id: string, name: string, audit?: AuditContext): Promise<ContactListRecord>;
  /** Deletes the list and its memberships (the contacts stay). NOT_FOUND for an unknown or another company's list. */
  delete(companyId: string, id: string, audit?: AuditContext): Promise<void>;
  /** Oldest first. */
  list(companyId: string): Promise<ContactListRecord[]>;
}

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

export function createContactLists(store: ContactListStore): ContactLists {
  return {
    async create(companyId, name, audit) {
      const valid = listName(name);
      const created = await store.create(companyId, randomUUID(), valid, audit && { context: audit, action: "contact_list.created", details: { name: valid } });
      if (created === "taken") throw taken();
      return created;
    },

    async rename(companyId, id, name, audit) {
      const valid = listName(name);
      if (!isUuid(id)) throw notFound();
      const renamed = await store.rename(companyId, id.toLowerCase(), valid, audit && { context: audit, action: "contact_list.renamed", details: { name: valid } });
      if (renamed === undefined) throw notFound();
      if (renamed === "taken") throw taken();
      return renamed;
    },

    async delete(companyId, id, audit) {
      const note = audit && { context: audit, action: "contact_list.deleted" as const, details: {} };
      if (!isUuid(id) || !(await store.delete(companyId, id.toLowerCase(), note))) throw notFound();
    },

    list(companyId) {
      return store.list(companyId);
    },
  };
}
