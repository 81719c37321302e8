import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { ValidationError } from "../../../contract/api-error.ts";
import { type CampaignClick, type RecordClickCommand, validateClick } from "../../../capabilities/conversions/index.ts";
import type { PublishEventCommand, WebhookEventPublisher } from "../../../capabilities/webhooks/index.ts";
import { checkPublishedEvent } from "../../../capabilities/webhooks/published-events.ts";
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
  /**
   * The click ledger conversions are attributed from (Conversions
   * fits): each published `campaign.click` is recorded there too. Clicks
   * are not recorded when absent.
   */
  readonly clicks?: ClickRecorder;
}

export interface ClickRecorder {
  recordClick(command: RecordClickCommand): Promise<{ readonly recorded: boolean }>;
}

export function eventsServiceImpl(deps: EventsServiceDeps): ServiceImpl<typeof EventsService> {
  return {
    async publishEvent(req) {
      const input = publishEventInput(req);
      const click = deps.clicks ? campaignClickOf(input) : undefined;
      // A click the ledger would refuse is refused before anything is
      // published (the event's own rules first, with their field names).
      if (click) checkClick(input, click);
      const published = await deps.publisher.publish(input);
      // Recorded on a replay too: both writes are idempotent on the event
      // id, so a retry after a failure between the two completes the first.
      if (click) await deps.clicks?.recordClick({ ...click, companyId: input.companyId });
      return { id: published.id, replayed: published.replayed };
    },
  };
}

/**
 * The click of a published `campaign.click` (checked by the publisher
 * already), as the conversions' click ledger keeps it: the event id is the
 * click id; `suspect: false` makes it a verified click, which attribution
 * reads. Undefined for every other event.
 */
export function campaignClickOf(input: PublishEventCommand): CampaignClick | undefined {
  const campaign = input.campaign;
  if (input.event !== "campaign.click" || !campaign || !input.occurredAt || campaign.linkId === undefined || campaign.suspect === undefined) {
    return undefined;
  }
  return {
    clickId: input.eventId,
    campaignId: campaign.campaignId.trim(),
    linkId: campaign.linkId.trim(),
    recipientId: campaign.recipientId.trim(),
    contactId: campaign.contactId.trim(),
    email: campaign.email.trim(),
    suspect: campaign.suspect,
    occurredAt: input.occurredAt,
  };
}

/** The click ledger's names of a click's fields, as the contract's request names them. */
const CONTRACT_FIELD: Readonly<Record<string, string>> = {
  clickId: "eventId",
  campaignId: "campaign.campaignId",
  linkId: "campaign.linkId",
  recipientId: "campaign.recipientId",
  "contactId, email": "campaign.contactId, campaign.email",
  occurredAt: "occurredAt",
};

/** Throws the 400 the publisher or the click ledger would answer, naming the request's fields. */
function checkClick(input: PublishEventCommand, click: CampaignClick): void {
  checkPublishedEvent(input);
  try {
    validateClick(click);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(error.fields.map((f) => ({ field: CONTRACT_FIELD[f.field] ?? f.field, problem: f.problem })));
  }
}

/** The request as the capability reads it: presence kept (an unset optional stays undefined). */
export function publishEventInput(req: PublishEventRequest): PublishEventCommand {
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
