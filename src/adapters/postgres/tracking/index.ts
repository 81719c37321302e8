export { PostgresTrackingStore } from "./postgres-tracking-store.ts";
