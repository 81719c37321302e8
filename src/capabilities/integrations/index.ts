export { integrationSource, StoreIntegrations, type StoreIntegrationsDependencies } from "./store-integrations.ts";
export type { OrderEventDraft, OrderRecordRequest, StoreIntegrationStore } from "./ports.ts";
export { canonicalOrder, decideOrder, isPaid, validateOrder, type OrderDecision } from "./order-rules.ts";
export {
  STORE_PROVIDERS,
  type ConnectStoreCommand,
  type ConnectStoreResult,
  type OrderBilling,
  type OrderLineItem,
  type PushOrderCommand,
  type PushOrderResult,
  type StoreIntegrationRecord,
  type StoreOrder,
  type StoreOrderInput,
  type StoreProvider,
} from "./types.ts";
