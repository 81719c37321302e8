export { createContacts, type Contacts, type ContactsDependencies, type ContactsOptions } from "./contacts-service.ts";
export { createContactLists, MAX_LIST_NAME, type ContactLists } from "./lists.ts";
export type { ContactListStore, ContactStore } from "./ports.ts";
export { CONTACT_LIMITS } from "./validate-write.ts";
export { DEFAULT_LIMIT, MAX_LIMIT } from "./filters.ts";
export {
  CONTACT_STATUSES,
  isContactStatus,
  WRITABLE_STATUSES,
  type AttributeValue,
  type ChangeSource,
  type ConsentRecord,
  type ContactListRecord,
  type ContactPage,
  type ContactRecord,
  type ContactState,
  type ContactStatusName,
  type ContactWrite,
  type ListContactsOptions,
  type SuppressionReason,
  type UpsertAnswer,
  type WriteOrigin,
} from "./types.ts";
