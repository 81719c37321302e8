export { PostgresClickLedger } from "./postgres-click-ledger.ts";
export { PostgresContactDirectory } from "./postgres-contact-directory.ts";
export { PostgresConversionStore } from "./postgres-conversion-store.ts";
