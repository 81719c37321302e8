import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { HostRefusedError, type WebhookDeliveries, type WebhookEndpoints, type WebhookTestEvents } from "../../../capabilities/webhooks/index.ts";
import { REQUEST_ID_HEADER } from "../../../contract/names.ts";
import type { WebhooksService } from "../../../gen/mail/v1/webhooks_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { deliveryListQueryOf, toAttemptProto, toDeliveryProto, toEndpointProto } from "./webhooks-to-proto.ts";

/** What the WebhooksService handlers call. */
export interface WebhooksServiceDeps {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
  /** "Send test event" of the administration screen. */
  readonly testEvents: WebhookTestEvents;
  /** Where a refused host's detail goes, under the request id (the answer never carries it). */
  readonly log?: { warn(details: Record<string, unknown>, message: string): void };
}

/**
 * The WebhooksService: each RPC maps the contract's messages to one use case
 * of the webhooks capability, for the company of the calling key (scope
 * `mail.admin`, checked by the auth interceptor from the contract).
 */
export function webhooksServiceImpl(deps: WebhooksServiceDeps): ServiceImpl<typeof WebhooksService> {
  const { endpoints, deliveries, testEvents } = deps;
  /** A refused host: the answer says "not allowed"; which address and why goes to the log only. */
  const logRefusal = async <T>(ctx: HandlerContext, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof HostRefusedError) {
        deps.log?.warn(
          { requestId: ctx.requestHeader.get(REQUEST_ID_HEADER) ?? "", companyId: callerOf(ctx).companyId, detail: error.detail },
          "webhook endpoint host refused",
        );
      }
      throw error;
    }
  };
  return {
    async createWebhookEndpoint(req, ctx) {
      const created = await logRefusal(ctx, () =>
        endpoints.create(callerOf(ctx).companyId, {
          url: req.url,
          description: req.description,
          events: req.events,
          enabled: req.enabled,
        }, auditContextOf(ctx)),
      );
      return { endpoint: toEndpointProto(created.endpoint), secret: created.secret };
    },
    async listWebhookEndpoints(_req, ctx) {
      return { items: (await endpoints.list(callerOf(ctx).companyId)).map(toEndpointProto) };
    },
    async getWebhookEndpoint(req, ctx) {
      return { endpoint: toEndpointProto(await endpoints.get(callerOf(ctx).companyId, req.id)) };
    },
    async updateWebhookEndpoint(req, ctx) {
      const updated = await logRefusal(ctx, () =>
        endpoints.update(callerOf(ctx).companyId, req.id, {
          url: req.url,
          description: req.description,
          events: req.events,
          enabled: req.enabled,
        }, auditContextOf(ctx)),
      );
      return { endpoint: toEndpointProto(updated) };
    },
    async deleteWebhookEndpoint(req, ctx) {
      await endpoints.delete(callerOf(ctx).companyId, req.id, auditContextOf(ctx));
      return { id: req.id };
    },
    async rotateWebhookSecret(req, ctx) {
      const rotated = await endpoints.rotateSecret(callerOf(ctx).companyId, req.id, auditContextOf(ctx));
      return { endpoint: toEndpointProto(rotated.endpoint), secret: rotated.secret };
    },
    async listWebhookDeliveries(req, ctx) {
      const page = await deliveries.list(callerOf(ctx).companyId, deliveryListQueryOf(req));
      return { items: page.items.map(toDeliveryProto), nextCursor: page.nextCursor ?? undefined };
    },
    async getWebhookDelivery(req, ctx) {
      const detail = await deliveries.get(callerOf(ctx).companyId, req.id);
      return { delivery: toDeliveryProto(detail.delivery), attempts: detail.attempts.map(toAttemptProto), body: detail.body };
    },
    async retryWebhookDelivery(req, ctx) {
      return { delivery: toDeliveryProto(await deliveries.retry(callerOf(ctx).companyId, req.id, auditContextOf(ctx))) };
    },
    async retryWebhookDeadLetters(req, ctx) {
      const companyId = callerOf(ctx).companyId;
      const since = req.since ? timestampDate(req.since) : undefined;
      if (req.dryRun) return { retried: 0, deadLetters: await deliveries.countDeadLetters(companyId, req.id, since) };
      const retried = await deliveries.retryDeadLetters(companyId, req.id, since, auditContextOf(ctx));
      return { retried, deadLetters: retried };
    },
    async sendTestWebhookEvent(req, ctx) {
      const result = await testEvents.send(callerOf(ctx).companyId, req.id, req.event);
      return {
        deliveryId: result.deliveryId,
        event: result.event,
        succeeded: result.succeeded,
        ...(result.status !== null ? { status: result.status } : {}),
        ...(result.error !== null ? { error: result.error } : {}),
        durationMs: result.durationMs,
        attemptedAt: timestampFromDate(result.attemptedAt),
        body: result.body,
      };
    },
  };
}
