import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresContactListStore, postgresContactStore } from "../adapters/postgres/contacts/index.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { ContactLists, Contacts } from "../capabilities/contacts/index.ts";

/** The contacts capability on an open ORM: contacts (POST/GET /mail/v1/contacts) and their lists (ListsService). */
export interface ContactsCapability {
  readonly contacts: Contacts;
  readonly lists: ContactLists;
}

export interface ContactsWiringOptions {
  /** The time of the contact writes; the system clock when absent. */
  readonly clock?: () => Date;
}

export function createContactsCapability(
  orm: MikroORM,
  config: Pick<Config, "cursorSecret">,
  options: ContactsWiringOptions = {},
): ContactsCapability {
  const listStore = new PostgresContactListStore(orm);
  return {
    contacts: new Contacts({ contacts: postgresContactStore(poolOf(orm)), lists: listStore, cursorSecret: config.cursorSecret, clock: options.clock }),
    lists: new ContactLists({ store: listStore }),
  };
}
