import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { WebhookDeliveries, WebhookEndpoints } from "../../../capabilities/webhooks/index.ts";
import type { WebhooksService } from "../../../gen/mail/v1/webhooks_pb.js";
import { callerOf } from "../context.ts";
import { deliveryStateFromProto, toAttemptProto, toDeliveryProto, toEndpointProto } from "./webhooks-to-proto.ts";

/** What the WebhooksService handlers call. */
export interface WebhooksServiceDeps {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
}

/**
 * The WebhooksService: each RPC maps the contract's messages to one use case
 * of the webhooks capability, for the company of the calling key (scope
 * `mail.admin`, checked by the auth interceptor from the contract).
 */
export function webhooksServiceImpl(deps: WebhooksServiceDeps): ServiceImpl<typeof WebhooksService> {
  const { endpoints, deliveries } = deps;
  return {
    async createWebhookEndpoint(req, ctx) {
      const created = await endpoints.create(callerOf(ctx).companyId, {
        url: req.url,
        description: req.description,
        events: req.events,
        enabled: req.enabled,
      });
      return { endpoint: toEndpointProto(created.endpoint), secret: created.secret };
    },
    async listWebhookEndpoints(_req, ctx) {
      return { items: (await endpoints.list(callerOf(ctx).companyId)).map(toEndpointProto) };
    },
    async getWebhookEndpoint(req, ctx) {
      return { endpoint: toEndpointProto(await endpoints.get(callerOf(ctx).companyId, req.id)) };
    },
    async updateWebhookEndpoint(req, ctx) {
      const updated = await endpoints.update(callerOf(ctx).companyId, req.id, {
        url: req.url,
        description: req.description,
        events: req.events,
        enabled: req.enabled,
      });
      return { endpoint: toEndpointProto(updated) };
    },
    async deleteWebhookEndpoint(req, ctx) {
      await endpoints.delete(callerOf(ctx).companyId, req.id);
      return { id: req.id };
    },
    async rotateWebhookSecret(req, ctx) {
      const rotated = await endpoints.rotateSecret(callerOf(ctx).companyId, req.id);
      return { endpoint: toEndpointProto(rotated.endpoint), secret: rotated.secret };
    },
    async listWebhookDeliveries(req, ctx) {
      const page = await deliveries.list(callerOf(ctx).companyId, {
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
    async getWebhookDelivery(req, ctx) {
      const detail = await deliveries.get(callerOf(ctx).companyId, req.id);
      return { delivery: toDeliveryProto(detail.delivery), attempts: detail.attempts.map(toAttemptProto) };
    },
    async retryWebhookDelivery(req, ctx) {
      return { delivery: toDeliveryProto(await deliveries.retry(callerOf(ctx).companyId, req.id)) };
    },
    async retryWebhookDeadLetters(req, ctx) {
      const retried = await deliveries.retryDeadLetters(callerOf(ctx).companyId, req.id, req.since ? timestampDate(req.since) : undefined);
      return { retried };
    },
  };
}
