export { Contacts, type ContactsDependencies } from "./contacts.ts";
export { ContactLists, MAX_LIST_NAME } from "./lists.ts";
export type { ContactListStore, ContactStore } from "./ports.ts";
export { CONTACT_LIMITS } from "./validate-write.ts";
export { CONTACT_CURSOR, contactFiltersFingerprint, parseListQuery, type ContactFilters } from "./filters.ts";
export {
  CONTACT_STATUSES,
  isContactStatus,
  WRITABLE_STATUSES,
  type AttributeValue,
  type ChangeSource,
  type ConfirmPendingCommand,
  type ConfirmPendingResult,
  type ConsentRecord,
  type ContactListRecord,
  type ContactPage,
  type ContactRecord,
  type ContactState,
  type ContactStatusName,
  type ContactWrite,
  type CreateContactListCommand,
  type DeleteContactListCommand,
  type GetContactCommand,
  type ListContactListsCommand,
  type ListContactsCommand,
  type MarkFromSuppressionCommand,
  type RenameContactListCommand,
  type SuppressionReason,
  type UnsubscribeContactCommand,
  type UnsubscribeContactResult,
  type UnsubscribeMethod,
  type UpsertContactCommand,
  type UpsertContactResult,
} from "./types.ts";
