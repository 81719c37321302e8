import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresContactListStore, postgresContactStore } from "../adapters/postgres/contacts/index.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { type ContactLists, type Contacts, createContactLists, createContacts } from "../capabilities/contacts/index.ts";

/** The contacts capability on an open ORM: contacts (POST/GET /mail/v1/contacts) and their lists (ListsService). */
export interface ContactsCapability {
  readonly contacts: Contacts;
  readonly lists: ContactLists;
}

export interface ContactsWiringOptions {
  /** The clock of the writes (tests pass their own). */
  readonly now?: () => Date;
}

export function createContactsCapability(
  orm: MikroORM,
  config: Pick<Config, "cursorSecret">,
  options: ContactsWiringOptions = {},
): ContactsCapability {
  const listStore = new PostgresContactListStore(orm);
  return {
    contacts: createContacts(
      { contacts: postgresContactStore(poolOf(orm)), lists: listStore },
      { cursorSecret: config.cursorSecret, ...(options.now ? { now: options.now } : {}) },
    ),
    lists: createContactLists(listStore),
  };
}
