import type { ServiceImpl } from "@connectrpc/connect";
import { ValidationError } from "../../../contract/api-error.ts";
import { type CampaignClick, type RecordClickCommand, validateClick } from "../../../capabilities/conversions/index.ts";
import type { PublishEventCommand, WebhookEventPublisher } from "../../../capabilities/webhooks/index.ts";
import { checkPublishedEvent } from "../../../capabilities/webhooks/published-events.ts";
import type { EventsService } from "../../../gen/mail/v1/events_pb.js";
import { publishEventInputOf, publishEventResponseOf } from "./mapping.ts";

/**
 * The EventsService: internal services publish campaign and order events
 * for webhook delivery. Operator token only (the service is
 * `operator_only`; the auth interceptor checks it), gRPC/Connect only (no
 * REST route, not in the OpenAPI document). The rules per kind are the
 * webhooks capability's (src/capabilities/webhooks/published-events.ts);
 * mapping.ts maps the contract's messages to its input and back.
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
      const input = publishEventInputOf(req);
      const click = deps.clicks ? campaignClickOf(input) : undefined;
      // A click the ledger would refuse is refused before anything is
      // published (the event's own rules first, with their field names).
      if (click) checkClick(input, click);
      const published = await deps.publisher.publish(input);
      // Recorded on a replay too: both writes are idempotent on the event
      // id, so a retry after a failure between the two completes the first.
      if (click) await deps.clicks?.recordClick({ ...click, companyId: input.companyId });
      return publishEventResponseOf(published);
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
