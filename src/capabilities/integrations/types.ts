/**
 * The store integrations' vocabulary: a connected shop and the orders it
 * pushes (modelled on WooCommerce's order webhook).
 */

export const STORE_PROVIDERS = ["woocommerce"] as const;

export type StoreProvider = (typeof STORE_PROVIDERS)[number];

export interface StoreIntegrationRecord {
  readonly id: string;
  readonly companyId: string;
  readonly provider: StoreProvider;
  /** Normalised: lower-case scheme and host, no trailing slash, no query. */
  readonly siteUrl: string;
  readonly createdAt: Date;
}

export interface OrderLineItem {
  readonly name: string;
  readonly quantity: number;
  /** Decimal string as the shop wrote it, e.g. `12.50`. */
  readonly total: string;
  readonly sku: string;
}

export interface OrderBilling {
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
}

/** An order as the shop sent it (unvalidated, the transport's mapping). */
export interface StoreOrderInput {
  /** The shop's order id (decimal). */
  readonly id: string;
  readonly status: string;
  readonly currency: string;
  readonly total: string;
  readonly lineItems: readonly OrderLineItem[];
  readonly billing: OrderBilling | undefined;
  readonly dateCreated: string;
  readonly datePaid: string;
}

/** A validated order: what is stored and what the `order.*` events carry. */
export interface StoreOrder {
  readonly id: string;
  readonly status: string;
  /** ISO 4217, upper case. */
  readonly currency: string;
  readonly total: string;
  readonly lineItems: readonly OrderLineItem[];
  readonly billing: OrderBilling | null;
  readonly dateCreated: string | null;
  readonly datePaid: string | null;
}

/** IntegrationsService ConnectStore: a shop of the company (unvalidated). */
export interface ConnectStoreCommand {
  readonly companyId: string;
  readonly provider: string;
  readonly siteUrl: string;
}

export interface ConnectStoreResult {
  readonly integration: StoreIntegrationRecord;
  /** False when the company had connected this (provider, site) already. */
  readonly created: boolean;
}

/** IntegrationsService PushOrder: an order a connected shop pushes. */
export interface PushOrderCommand {
  readonly companyId: string;
  readonly integrationId: string;
  readonly order: StoreOrderInput;
}

export interface PushOrderResult {
  /** First time the order was seen. */
  readonly created: boolean;
  /** The push changed what was stored (false for a repeated push of the same order). */
  readonly changed: boolean;
  readonly paid: boolean;
  /** The contact of the billing address; null when there was no usable address. */
  readonly contactId: string | null;
}
