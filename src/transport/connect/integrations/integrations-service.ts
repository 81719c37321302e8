import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreIntegrations, StoreOrderInput } from "../../../capabilities/integrations/index.ts";
import type { IntegrationsService, StoreOrder } from "../../../gen/mail/v1/integrations_pb.js";
import { callerOf } from "../context.ts";

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

/**
 * The IntegrationsService (scope mail.integrations.write, checked by the
 * auth interceptor from the contract), for the company of the calling key.
 */
export function integrationsServiceImpl(integrations: StoreIntegrations): ServiceImpl<typeof IntegrationsService> {
  return {
    async connectStore(req, ctx) {
      const { integration, created } = await integrations.connectStore(callerOf(ctx).companyId, req.provider, req.siteUrl);
      return {
        integration: { id: integration.id, provider: integration.provider, siteUrl: integration.siteUrl, createdAt: timestampFromDate(integration.createdAt) },
        created,
      };
    },
    async pushOrder(req, ctx) {
      const answer = await integrations.pushOrder(callerOf(ctx).companyId, req.integrationId, orderInput(req.order));
      return { created: answer.created, changed: answer.changed, paid: answer.paid, contactId: answer.contactId ?? "" };
    },
  };
}
