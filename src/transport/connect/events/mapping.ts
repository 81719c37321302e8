import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { PublishEventCommand } from "../../../capabilities/webhooks/index.ts";
import type { PublishEventRequest, PublishEventResponseSchema } from "../../../gen/mail/v1/events_pb.js";

/** EventsService between the contract and the webhooks capability's publisher, both ways. */

/** The request as the capability reads it: presence kept (an unset optional stays undefined). */
export function publishEventInputOf(req: PublishEventRequest): PublishEventCommand {
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

/** What the publisher answered: the event's id, and whether it was published before. */
export function publishEventResponseOf(published: { readonly id: string; readonly replayed: boolean }): MessageInitShape<typeof PublishEventResponseSchema> {
  return { id: published.id, replayed: published.replayed };
}
