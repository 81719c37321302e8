import { Context } from "@temporalio/activity";
import type { CampaignSending } from "../../../capabilities/campaigns/campaign-sending.ts";
import type { CampaignActivities } from "../../../../workflows/campaigns/activities.ts";

/** What the campaign activities run: CampaignSending's steps, each idempotent. */
export interface CampaignActivityDependencies {
  readonly sending: Pick<CampaignSending, "start" | "sendBatch" | "finish">;
}

/**
 * The campaign workflow's activities (workflows/campaigns/activities.ts):
 * thin adapters from Temporal to CampaignSending, for the worker's
 * activity set (`{ ...createCampaignActivities({ sending }) }`).
 */
export function createCampaignActivities({ sending }: CampaignActivityDependencies): CampaignActivities {
  return {
    startCampaign: (companyId, campaignId) => sending.start({ companyId, campaignId }),
    async sendCampaignBatch(companyId, campaignId, size) {
      // Heartbeats for every recipient and while the pace is waited for: a dead worker is noticed in seconds.
      const activity = Context.current();
      return sending.sendBatch({ companyId, campaignId, size, heartbeat: () => activity.heartbeat() });
    },
    async finishCampaign(companyId, campaignId) {
      await sending.finish({ companyId, campaignId });
    },
  };
}
