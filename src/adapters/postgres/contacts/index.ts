export { postgresContactStore } from "./postgres-contact-store.ts";
export { PostgresContactListStore } from "./postgres-contact-list-store.ts";
