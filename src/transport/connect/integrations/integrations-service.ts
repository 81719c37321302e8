import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreIntegrations } from "../../../capabilities/integrations/index.ts";
import type { IntegrationsService } from "../../../gen/mail/v1/integrations_pb.js";
import { callerOf } from "../context.ts";
import { connectStoreCommand, pushOrderCommand, toConnectStoreResponse, toPushOrderResponse } from "./integrations-to-proto.ts";

/**
 * The IntegrationsService (scope mail.integrations.write, checked by the
 * auth interceptor from the contract), for the company of the caller.
 */
export function integrationsServiceImpl(integrations: StoreIntegrations): ServiceImpl<typeof IntegrationsService> {
  return {
    async connectStore(req, ctx) {
      return toConnectStoreResponse(await integrations.connect(connectStoreCommand(callerOf(ctx).companyId, req)));
    },
    async pushOrder(req, ctx) {
      return toPushOrderResponse(await integrations.pushOrder(pushOrderCommand(callerOf(ctx).companyId, req)));
    },
  };
}
