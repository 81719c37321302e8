import type { MikroORM } from "@mikro-orm/postgresql";
import { PostgresTrackingStore } from "../adapters/postgres/tracking/index.ts";
import type { CampaignEngagementPort } from "../capabilities/campaigns/ports.ts";
import type { EngagementPublisher, TrackingDependencies } from "../capabilities/tracking/index.ts";
import { CopyDecorator, Tracking } from "../capabilities/tracking/index.ts";
import { type Config, trackingBaseUrlOf } from "../config.ts";

/**
 * Campaign tracking and unsubscribe on an open ORM: its own store, the
 * other capabilities it drives (contacts' unsubscribe, the webhooks'
 * publisher, the conversions' click ledger, the rate limiter of the
 * anonymous door), its key derived from CONFIRMATION_SECRET, its addresses
 * on TRACKING_BASE_URL and its mailto on RETURN_PATH_MX_HOST (the inbound
 * SMTP listener's name).
 */
export function createTracking(
  orm: MikroORM,
  config: Pick<Config, "confirmationSecret" | "trackingBaseUrl" | "publicBaseUrl" | "host" | "httpPort" | "returnPathMxHost">,
  parts: Pick<TrackingDependencies, "contacts" | "publisher" | "clicks" | "rateLimiter"> & { readonly engagement: CampaignEngagementPort },
): Tracking {
  const { engagement, ...rest } = parts;
  return new Tracking({
    ...rest,
    publisher: recordingEngagement(parts.publisher, engagement),
    store: new PostgresTrackingStore(orm),
    secret: config.confirmationSecret,
    baseUrl: trackingBaseUrlOf(config),
    mailtoDomain: config.returnPathMxHost,
  });
}

/**
 * The decorator of campaign copies alone, for a process that sends
 * campaigns without serving the tracking addresses (a worker's campaign
 * activities): the same store, key and addresses as createTracking.
 */
export function createCopyDecorator(
  orm: MikroORM,
  config: Pick<Config, "confirmationSecret" | "trackingBaseUrl" | "publicBaseUrl" | "host" | "httpPort" | "returnPathMxHost">,
): CopyDecorator {
  return new CopyDecorator({
    store: new PostgresTrackingStore(orm),
    secret: config.confirmationSecret,
    baseUrl: trackingBaseUrlOf(config),
    mailtoDomain: config.returnPathMxHost,
  });
}

/**
 * The campaign's results count first opens, first verified clicks and
 * unsubscribes per recipient: each `opened`, `clicked` and `unsubscribed`
 * tracking publishes is also recorded on the campaign's recipient, before
 * the event is published (a retry records nothing twice: first time only).
 */
function recordingEngagement(publisher: EngagementPublisher, engagement: CampaignEngagementPort): EngagementPublisher {
  const record = {
    opened: engagement.recordOpen.bind(engagement),
    clicked: engagement.recordClick.bind(engagement),
    unsubscribed: engagement.recordUnsubscribe.bind(engagement),
  } as const;
  return {
    async publish(command) {
      const recorder = command.event in record ? record[command.event as keyof typeof record] : undefined;
      if (recorder && command.campaign) await recorder(command.companyId, command.campaign.recipientId, command.occurredAt ?? new Date());
      return publisher.publish(command);
    },
  };
}
