import type { OrderDecision } from "./order-rules.ts";
import type { StoreIntegrationRecord, StoreOrder, StoreProvider } from "./types.ts";

/** An `order.*` outbox row (webhook_event), written in the transaction that records the order. */
export interface OrderEventDraft {
  readonly event: "order.event" | "order.created" | "order.paid";
  readonly occurredAt: Date;
  readonly data: Readonly<Record<string, unknown>>;
  /** Unique per change: recording is idempotent. */
  readonly dedupeKey: string;
}

export interface OrderRecordRequest {
  readonly companyId: string;
  readonly integrationId: string;
  readonly order: StoreOrder;
  /** The billing address's contact; null keeps the one stored (if any). */
  readonly contactId: string | null;
  /** Pure; called with the stored order locked (undefined the first time). */
  readonly decide: (previous: StoreOrder | undefined) => OrderDecision;
  /** The events of a decision; `orderKey` is the stored order's id, `version` its version after the push. */
  readonly events: (decision: OrderDecision, orderKey: string, version: number) => OrderEventDraft[];
}

/** What the store integrations need from storage (src/adapters/postgres/integrations). Scoped by company id. */
export interface StoreIntegrationStore {
  /** The company's integration of (provider, siteUrl), created when there is none. */
  connect(companyId: string, provider: StoreProvider, siteUrl: string): Promise<{ integration: StoreIntegrationRecord; created: boolean }>;
  /** `id` is a UUID; undefined when the company has no such integration. */
  find(companyId: string, id: string): Promise<StoreIntegrationRecord | undefined>;
  /**
   * Records the order as `decide` says (insert, update when changed, or
   * nothing) and its events, in one transaction. Concurrent pushes of one
   * order are applied one after the other.
   */
  recordOrder(request: OrderRecordRequest): Promise<OrderDecision>;
}
