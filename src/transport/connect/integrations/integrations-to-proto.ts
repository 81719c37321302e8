import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  ConnectStoreCommand,
  ConnectStoreResult,
  PushOrderCommand,
  PushOrderResult,
  StoreOrderInput,
} from "../../../capabilities/integrations/index.ts";
import {
  type ConnectStoreRequest,
  type ConnectStoreResponse,
  ConnectStoreResponseSchema,
  type PushOrderRequest,
  type PushOrderResponse,
  PushOrderResponseSchema,
  type StoreOrder,
} from "../../../gen/mail/v1/integrations_pb.js";

/** The IntegrationsService both ways: requests as the store integrations' commands, results as the contract's answers. */

export function connectStoreCommand(companyId: string, req: ConnectStoreRequest): ConnectStoreCommand {
  return { companyId, provider: req.provider, siteUrl: req.siteUrl };
}

export function toConnectStoreResponse({ integration, created }: ConnectStoreResult): ConnectStoreResponse {
  return create(ConnectStoreResponseSchema, {
    integration: { id: integration.id, provider: integration.provider, siteUrl: integration.siteUrl, createdAt: timestampFromDate(integration.createdAt) },
    created,
  });
}

export function pushOrderCommand(companyId: string, req: PushOrderRequest): PushOrderCommand {
  return { companyId, integrationId: req.integrationId, order: orderInput(req.order) };
}

export function toPushOrderResponse(result: PushOrderResult): PushOrderResponse {
  return create(PushOrderResponseSchema, { created: result.created, changed: result.changed, paid: result.paid, contactId: result.contactId ?? "" });
}

/** The contract's order as the capability's input (unvalidated: the capability checks it). */
function orderInput(order: StoreOrder | undefined): StoreOrderInput {
  return {
    id: order ? order.id.toString() : "",
    status: order?.status ?? "",
    currency: order?.currency ?? "",
    total: order?.total ?? "",
    lineItems: (order?.lineItems ?? []).map((item) => ({ name: item.name, quantity: item.quantity, total: item.total, sku: item.sku })),
    billing: order?.billing ? { email: order.billing.email, firstName: order.billing.firstName, lastName: order.billing.lastName } : undefined,
    dateCreated: order?.dateCreated ?? "",
    datePaid: order?.datePaid ?? "",
  };
}
