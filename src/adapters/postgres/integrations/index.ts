export { postgresStoreIntegrationStore } from "./postgres-store-integration-store.ts";
