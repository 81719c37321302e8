import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  HostRefusedError,
  type LiveEvents,
  type WebhookDeliveries,
  type WebhookEndpoints,
  type WebhookTestEvents,
} from "../../../capabilities/webhooks/index.ts";
import { REQUEST_ID_HEADER } from "../../../contract/names.ts";
import type { WebhooksService } from "../../../gen/mail/v1/webhooks_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import {
  type CallScope,
  createEndpointCommandOf,
  deliveryListQueryOf,
  retryDeadLettersCommandOf,
  toAttemptProto,
  toDeliveryProto,
  toEndpointProto,
  toEndpointWithSecretProto,
  toStreamEventsProto,
  toTestEventProto,
  toTriggeredEventProto,
  updateEndpointCommandOf,
} from "./webhooks-to-proto.ts";

/** What the WebhooksService handlers call. */
export interface WebhooksServiceDeps {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
  /** "Send test event" of the administration screen. */
  readonly testEvents: WebhookTestEvents;
  /** The live event streams (`mailctl listen`) and their test events (`mailctl trigger`). */
  readonly live: LiveEvents;
  /** Where a refused host's detail goes, under the request id (the answer never carries it). */
  readonly log?: { warn(details: Record<string, unknown>, message: string): void };
}

function scopeOf(ctx: HandlerContext): CallScope {
  return { companyId: callerOf(ctx).companyId, audit: auditContextOf(ctx) };
}

/**
 * The WebhooksService: each RPC maps the contract's messages to one use case
 * of the webhooks capability, for the company of the calling key (scope
 * `mail.admin`, checked by the auth interceptor from the contract).
 */
export function webhooksServiceImpl(deps: WebhooksServiceDeps): ServiceImpl<typeof WebhooksService> {
  const { endpoints, deliveries, testEvents, live } = deps;
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
      return toEndpointWithSecretProto(await logRefusal(ctx, () => endpoints.create(createEndpointCommandOf(req, scopeOf(ctx)))));
    },
    async listWebhookEndpoints(_req, ctx) {
      return { items: (await endpoints.list({ companyId: callerOf(ctx).companyId })).map(toEndpointProto) };
    },
    async getWebhookEndpoint(req, ctx) {
      return { endpoint: toEndpointProto(await endpoints.get({ companyId: callerOf(ctx).companyId, endpointId: req.id })) };
    },
    async updateWebhookEndpoint(req, ctx) {
      return { endpoint: toEndpointProto(await logRefusal(ctx, () => endpoints.update(updateEndpointCommandOf(req, scopeOf(ctx))))) };
    },
    async deleteWebhookEndpoint(req, ctx) {
      await endpoints.delete({ ...scopeOf(ctx), endpointId: req.id });
      return { id: req.id };
    },
    async rotateWebhookSecret(req, ctx) {
      return toEndpointWithSecretProto(await endpoints.rotateSecret({ ...scopeOf(ctx), endpointId: req.id }));
    },
    async listWebhookDeliveries(req, ctx) {
      const page = await deliveries.list({ companyId: callerOf(ctx).companyId, ...deliveryListQueryOf(req) });
      return { items: page.items.map(toDeliveryProto), nextCursor: page.nextCursor ?? undefined };
    },
    async getWebhookDelivery(req, ctx) {
      const detail = await deliveries.get({ companyId: callerOf(ctx).companyId, deliveryId: req.id });
      return { delivery: toDeliveryProto(detail.delivery), attempts: detail.attempts.map(toAttemptProto), body: detail.body };
    },
    async retryWebhookDelivery(req, ctx) {
      return { delivery: toDeliveryProto(await deliveries.retry({ ...scopeOf(ctx), deliveryId: req.id })) };
    },
    async retryWebhookDeadLetters(req, ctx) {
      return deliveries.retryDeadLetters(retryDeadLettersCommandOf(req, scopeOf(ctx)));
    },
    async sendTestWebhookEvent(req, ctx) {
      return toTestEventProto(await testEvents.send({ companyId: callerOf(ctx).companyId, endpointId: req.id, event: req.event }));
    },
    async *streamEvents(req, ctx) {
      // ctx.signal: the client went away (or the call's deadline passed): the stream ends at once.
      for await (const item of live.stream({ companyId: callerOf(ctx).companyId, events: req.events, signal: ctx.signal })) {
        yield toStreamEventsProto(item);
      }
    },
    async triggerWebhookEvent(req, ctx) {
      return toTriggeredEventProto(await live.trigger({ companyId: callerOf(ctx).companyId, event: req.event, endpoints: req.endpoints }));
    },
  };
}
