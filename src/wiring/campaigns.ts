import type { MikroORM } from "@mikro-orm/postgresql";
import type { Client as TemporalWorkflowClient } from "@temporalio/client";
import type { Config } from "../config.ts";
import { PostgresCampaignStore } from "../adapters/postgres/campaigns/postgres-campaign-store.ts";
import { PostgresConversionStore } from "../adapters/postgres/conversions/index.ts";
import { PostgresMessageStore } from "../adapters/postgres/messages/message-store.ts";
import { PostgresTrackingStore } from "../adapters/postgres/tracking/postgres-tracking-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { CampaignDispatcher } from "../adapters/temporal/campaigns/dispatcher.ts";
import { Campaigns, CampaignSending } from "../capabilities/campaigns/index.ts";
import { LifecycleCampaignHandoff } from "../capabilities/campaigns/lifecycle-handoff.ts";
import type {
  CampaignEngagementPort,
  CampaignInsightsPort,
  CampaignMessageDecorator,
  CampaignSendersPort,
  CampaignTemplatesPort,
} from "../capabilities/campaigns/ports.ts";
import type { Messaging } from "./messaging.ts";
import type { SecretSealer } from "../capabilities/sending-setup/key-sealing.ts";

export interface CampaignsWiringDependencies {
  /** The open ORM: the campaign, tracking and conversion stores read through it, the message store through its pool. */
  readonly orm: MikroORM;
  readonly config: Pick<Config, "cursorSecret" | "temporalTaskQueue">;
  readonly temporal: TemporalWorkflowClient;
  readonly messaging: Pick<Messaging, "acceptance" | "lifecycle">;
  readonly senders: CampaignSendersPort;
  readonly templates: CampaignTemplatesPort;
  readonly sealer: SecretSealer;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /** Adds tracking and List-Unsubscribe to every copy (src/capabilities/tracking). */
  readonly decorator: CampaignMessageDecorator;
}

export interface CampaignsWiring {
  /** The use cases of CampaignsService. */
  readonly campaigns: Campaigns;
  /** The steps the campaign workflow's activities run (workers). */
  readonly sending: CampaignSending;
  /** Where tracking and unsubscribe record engagement. */
  readonly engagement: CampaignEngagementPort;
}

/** The campaigns capability on a database, the send path and the Temporal client. */
export function createCampaignsWiring(deps: CampaignsWiringDependencies): CampaignsWiring {
  const store = new PostgresCampaignStore(deps.orm);
  const workflows = new CampaignDispatcher({ client: deps.temporal, taskQueue: deps.config.temporalTaskQueue, store, log: deps.log });
  const tracking = new PostgresTrackingStore(deps.orm);
  const conversions = new PostgresConversionStore(deps.orm);
  // The results read what tracking and conversions recorded, through their own stores.
  const insights: CampaignInsightsPort = {
    async links(companyId, campaignId) {
      const links = await tracking.clicksPerLink(companyId, campaignId);
      return links.map((link) => ({
        linkId: link.linkId,
        url: link.url,
        clicks: link.clicks - link.suspectClicks,
        clickers: link.uniqueClicks,
        suspectClicks: link.suspectClicks,
      }));
    },
    timeline: (companyId, campaignId, interval) => tracking.timeline(companyId, campaignId, interval),
    revenue: (companyId, campaignId) => conversions.revenueByCampaign(companyId, { campaignId }),
  };
  const campaigns = new Campaigns({
    store,
    insights,
    senders: deps.senders,
    templates: deps.templates,
    workflows,
    cursorSecret: deps.config.cursorSecret,
    testSend: {
      // The service's own mail: a test copy is a one-off to the member, from the campaign's sender.
      async send(command) {
        const result = await deps.messaging.acceptance.send({
          companyId: command.companyId,
          origin: { kind: "system" },
          to: command.to,
          subject: command.subject,
          ...(command.html !== undefined ? { html: command.html } : {}),
          ...(command.text !== undefined ? { text: command.text } : {}),
          ...(command.senderId !== undefined ? { senderId: command.senderId } : {}),
          ...(command.replyTo !== undefined ? { replyTo: command.replyTo } : {}),
          tags: { campaignTest: "true" },
        });
        return { messageId: result.id };
      },
    },
  });
  const sending = new CampaignSending({
    store,
    senders: deps.senders,
    templates: deps.templates,
    decorator: deps.decorator,
    handoff: new LifecycleCampaignHandoff({
      store: new PostgresMessageStore(poolOf(deps.orm), { sealer: deps.sealer }),
      lifecycle: deps.messaging.lifecycle,
    }),
  });
  return { campaigns, sending, engagement: store };
}
