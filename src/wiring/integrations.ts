import type { MikroORM } from "@mikro-orm/postgresql";
import { postgresStoreIntegrationStore } from "../adapters/postgres/integrations/index.ts";
import type { Contacts } from "../capabilities/contacts/index.ts";
import { StoreIntegrations } from "../capabilities/integrations/index.ts";

export interface IntegrationsWiringOptions {
  /** The contacts capability (services.contacts): order customers are synced through it. */
  readonly contacts: Contacts;
  /** The time of the order events; the system clock when absent. */
  readonly clock?: () => Date;
}

/** The store integrations (IntegrationsService) on an open ORM. */
export function createIntegrationsCapability(orm: MikroORM, options: IntegrationsWiringOptions): StoreIntegrations {
  return new StoreIntegrations({ store: postgresStoreIntegrationStore(orm), contacts: options.contacts, clock: options.clock });
}
