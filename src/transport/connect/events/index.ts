import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { PublishEventInput, WebhookEventPublisher } from "../../../capabilities/webhooks/index.ts";
import type { EventsService, PublishEventRequest } from "../../../gen/mail/v1/events_pb.js";

/**
 * The EventsService: internal services publish campaign and order events
 * for webhook delivery. Operator token only (the service is
 * `operator_only`; the auth interceptor checks it), gRPC/Connect only (no
 * REST route, not in the OpenAPI document). The rules per kind are the
 * webhooks capability's (src/capabilities/webhooks/published-events.ts);
 * this maps the contract's message to its input.
 */
export interface EventsServiceDeps {
  readonly publisher: WebhookEventPublisher;
}

export function eventsServiceImpl(deps: EventsServiceDeps): ServiceImpl<typeof EventsService> {
  return {
    async publishEvent(req) {
      const published = await deps.publisher.publish(publishEventInput(req));
      return { id: published.id, replayed: published.replayed };
    },
  };
}

/** The request as the capability reads it: presence kept (an unset optional stays undefined). */
export function publishEventInput(req: PublishEventRequest): PublishEventInput {
  const base = {
    companyId: req.companyId,
    eventId: req.eventId,
    event: req.event,
    occurredAt: req.occurredAt ? timestampDate(req.occurredAt) : undefined,
  };
  const { data } = req;
  switch (data.case) {
    case "campaign":
      return {
        ...base,
        campaign: {
          campaignId: data.value.campaignId,
          recipientId: data.value.recipientId,
          contactId: data.value.contactId,
          email: data.value.email,
          linkId: data.value.linkId,
          suspect: data.value.suspect,
        },
      };
    case "campaignSent":
      return {
        ...base,
        campaignSent: {
          campaignId: data.value.campaignId,
          // int64 on the wire; the capability refuses what is not a safe whole number.
          accepted: Number(data.value.accepted),
          failed: Number(data.value.failed),
          suppressed: Number(data.value.suppressed),
          skipped: Number(data.value.skipped),
          unknown: Number(data.value.unknown),
        },
      };
    case "order":
      return {
        ...base,
        order: {
          integrationId: data.value.integrationId,
          provider: data.value.provider,
          // google.protobuf.Struct arrives as the JSON object it holds.
          order: data.value.order,
        },
      };
    case undefined:
      return base;
  }
}
