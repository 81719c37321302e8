import type { MikroORM } from "@mikro-orm/postgresql";
import { postgresStoreIntegrationStore } from "../adapters/postgres/integrations/index.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import type { Contacts } from "../capabilities/contacts/index.ts";
import { createStoreIntegrations, type StoreIntegrations } from "../capabilities/integrations/index.ts";

export interface IntegrationsWiringOptions {
  /** The contacts capability (services.contacts): order customers are synced through it. */
  readonly contacts: Contacts;
  /** The clock of the order events (tests pass their own). */
  readonly now?: () => Date;
}

/** The store integrations (IntegrationsService) on an open ORM. */
export function createIntegrationsCapability(orm: MikroORM, options: IntegrationsWiringOptions): StoreIntegrations {
  return createStoreIntegrations({
    store: postgresStoreIntegrationStore(poolOf(orm)),
    contacts: options.contacts,
    ...(options.now ? { now: options.now } : {}),
  });
}
