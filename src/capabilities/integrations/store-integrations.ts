import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { Contacts } from "../contacts/index.ts";
import { decideOrder, validateOrder } from "./order-rules.ts";
import type { OrderEventDraft, StoreIntegrationStore } from "./ports.ts";
import {
  STORE_PROVIDERS,
  type ConnectStoreCommand,
  type ConnectStoreResult,
  type PushOrderCommand,
  type PushOrderResult,
  type StoreProvider,
} from "./types.ts";

export interface StoreIntegrationsDependencies {
  readonly store: StoreIntegrationStore;
  /** Order customers become contacts through the contacts capability. */
  readonly contacts: Pick<Contacts, "upsert">;
  /** The time of the order events; the system clock when absent. */
  readonly clock?: (() => Date) | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isProvider(value: string): value is StoreProvider {
  return (STORE_PROVIDERS as readonly string[]).includes(value);
}

/** The site's address in one spelling, so that reconnecting finds the same integration. */
function normaliseSiteUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username !== "" || url.password !== "") return undefined;
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

/** The `source` of the contact changes a store's orders make (docs/integrations.md). */
export function integrationSource(integrationId: string): `integration:${string}` {
  return `integration:${integrationId}`;
}

/** Store integrations (IntegrationsService; scope mail.integrations.write). */
export class StoreIntegrations {
  readonly #deps: StoreIntegrationsDependencies;
  readonly #clock: () => Date;

  constructor(deps: StoreIntegrationsDependencies) {
    this.#deps = deps;
    this.#clock = deps.clock ?? (() => new Date());
  }

  /** Connects a shop; the same (provider, site) again answers the integration it has (`created` false). */
  async connect(command: ConnectStoreCommand): Promise<ConnectStoreResult> {
    const problems = [];
    const name = command.provider.trim().toLowerCase();
    if (!isProvider(name)) problems.push({ field: "provider", problem: `must be one of ${STORE_PROVIDERS.join(", ")}` });
    const site = normaliseSiteUrl(command.siteUrl);
    if (site === undefined || site.length > 2000) problems.push({ field: "siteUrl", problem: "must be an absolute http(s) URL without credentials" });
    if (problems.length > 0 || !isProvider(name) || site === undefined) throw new ValidationError(problems);
    return this.#deps.store.connect(command.companyId, name, site);
  }

  /**
   * Records an order pushed by a shop, idempotent per (integration, order
   * id), syncs its billing address as a contact and writes `order.event`
   * (each change), `order.created` (first push) and `order.paid` (the push
   * in which it becomes paid) to the webhook outbox with the order.
   * 404 NOT_FOUND for an unknown or foreign integration.
   */
  async pushOrder(command: PushOrderCommand): Promise<PushOrderResult> {
    const { companyId, integrationId } = command;
    const integration = UUID.test(integrationId) ? await this.#deps.store.find(companyId, integrationId.toLowerCase()) : undefined;
    if (!integration) throw new ApiError("NOT_FOUND", "integration not found");
    const order = validateOrder(command.order);

    // The customer as a contact, through the contacts capability: a new one is pending (no consent comes with an order),
    // an existing one keeps its status (protected ones included); only the names the order has are written. Its
    // contact.updated events name the integration as their source.
    let contactId: string | null = null;
    if (order.billing && order.billing.email !== "") {
      try {
        const { contact } = await this.#deps.contacts.upsert({
          companyId,
          source: integrationSource(integration.id),
          email: order.billing.email,
          ...(order.billing.firstName !== "" ? { firstName: order.billing.firstName } : {}),
          ...(order.billing.lastName !== "" ? { lastName: order.billing.lastName } : {}),
        });
        contactId = contact.id;
      } catch (error) {
        // A shop's address our contact rules refuse does not refuse the order: it is recorded without a contact.
        if (!(error instanceof ValidationError)) throw error;
      }
    }

    const at = this.#clock();
    const data = { integrationId: integration.id, provider: integration.provider, order };
    const decision = await this.#deps.store.recordOrder({
      companyId,
      integrationId: integration.id,
      order,
      contactId,
      decide: (previous) => decideOrder(previous, order),
      events: (decided, orderKey, version) => {
        const drafts: OrderEventDraft[] = [];
        if (!decided.changed) return drafts;
        drafts.push({ event: "order.event", occurredAt: at, data, dedupeKey: `order:${orderKey}:v${version}` });
        if (decided.created) drafts.push({ event: "order.created", occurredAt: at, data, dedupeKey: `order:${orderKey}:created` });
        if (decided.becamePaid) drafts.push({ event: "order.paid", occurredAt: at, data, dedupeKey: `order:${orderKey}:paid` });
        return drafts;
      },
    });
    return { created: decision.created, changed: decision.changed, paid: decision.paid, contactId };
  }
}
