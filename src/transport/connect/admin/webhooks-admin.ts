import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountsService } from "../../../capabilities/accounts/index.ts";
import type { WebhookDeliveries, WebhookEndpoints } from "../../../capabilities/webhooks/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { deliveryStateFromProto, toAttemptProto, toDeliveryProto, toEndpointProto } from "../webhooks/webhooks-to-proto.ts";
import { operatorAuditOf } from "../context.ts";

/**
 * AdminService handlers of webhook endpoints and deliveries: the
 * WebhooksService's operations for operators, on the company named in the
 * request (the operator token is checked by the auth interceptor). The same
 * use cases, so the same rules and answers; an unknown company answers
 * 404 NOT_FOUND, as in the other company operations.
 */
export interface WebhooksAdminDeps {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
}

export type WebhooksAdmin = Pick<
  ServiceImpl<typeof AdminService>,
  | "createWebhookEndpoint"
  | "listWebhookEndpoints"
  | "getWebhookEndpoint"
  | "updateWebhookEndpoint"
  | "deleteWebhookEndpoint"
  | "rotateWebhookSecret"
  | "listWebhookDeliveries"
  | "getWebhookDelivery"
  | "retryWebhookDelivery"
  | "retryWebhookDeadLetters"
>;

export function webhooksAdmin(deps: WebhooksAdminDeps, accounts: Pick<AccountsService, "getCompany">): WebhooksAdmin {
  const { endpoints, deliveries } = deps;
  /** The company named in the request, which must exist. */
  const company = async (req: { companyId: string }): Promise<string> => (await accounts.getCompany(req.companyId)).id;
  return {
    async createWebhookEndpoint(req, ctx) {
      const created = await endpoints.create(
        await company(req),
        { url: req.url, description: req.description, events: req.events, enabled: req.enabled },
        operatorAuditOf(ctx),
      );
      return { endpoint: toEndpointProto(created.endpoint), secret: created.secret };
    },
    async listWebhookEndpoints(req) {
      return { items: (await endpoints.list(await company(req))).map(toEndpointProto) };
    },
    async getWebhookEndpoint(req) {
      return { endpoint: toEndpointProto(await endpoints.get(await company(req), req.id)) };
    },
    async updateWebhookEndpoint(req, ctx) {
      const updated = await endpoints.update(
        await company(req),
        req.id,
        { url: req.url, description: req.description, events: req.events, enabled: req.enabled },
        operatorAuditOf(ctx),
      );
      return { endpoint: toEndpointProto(updated) };
    },
    async deleteWebhookEndpoint(req, ctx) {
      await endpoints.delete(await company(req), req.id, operatorAuditOf(ctx));
      return { id: req.id };
    },
    async rotateWebhookSecret(req, ctx) {
      const rotated = await endpoints.rotateSecret(await company(req), req.id, operatorAuditOf(ctx));
      return { endpoint: toEndpointProto(rotated.endpoint), secret: rotated.secret };
    },
    async listWebhookDeliveries(req) {
      const page = await deliveries.list(await company(req), {
        limit: req.limit,
        cursor: req.cursor,
        endpointId: req.endpointId,
        state: deliveryStateFromProto(req.state),
        event: req.event,
        since: req.since ? timestampDate(req.since) : undefined,
        until: req.until ? timestampDate(req.until) : undefined,
      });
      return { items: page.items.map(toDeliveryProto), nextCursor: page.nextCursor ?? undefined };
    },
    async getWebhookDelivery(req) {
      const detail = await deliveries.get(await company(req), req.id);
      return { delivery: toDeliveryProto(detail.delivery), attempts: detail.attempts.map(toAttemptProto) };
    },
    async retryWebhookDelivery(req, ctx) {
      return { delivery: toDeliveryProto(await deliveries.retry(await company(req), req.id, operatorAuditOf(ctx))) };
    },
    async retryWebhookDeadLetters(req, ctx) {
      const since = req.since ? timestampDate(req.since) : undefined;
      const retried = await deliveries.retryDeadLetters(await company(req), req.id, since, operatorAuditOf(ctx));
      return { retried };
    },
  };
}
