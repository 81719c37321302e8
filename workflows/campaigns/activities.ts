/**
 * The campaign workflow's activities, declared here and implemented by
 * src/adapters/temporal/campaigns/activities.ts (types only: the workflow
 * imports nothing else). Each activity's arguments are what workflows
 * under way have scheduled it with: they stay as they are.
 */

/** A campaign state as the API names it (`scheduled`, `sending`, `paused`, `sent`, `cancelled`, ...). */
export type CampaignWorkflowState = string;

export interface CampaignStart {
  readonly state: CampaignWorkflowState;
  /** While `scheduled`: milliseconds to its time. */
  readonly waitMs: number;
}

export interface CampaignBatch {
  /** The campaign's state when the batch began (`sending`: the batch ran). */
  readonly state: CampaignWorkflowState;
  /** Recipients handed over or counted by this batch. */
  readonly settled: number;
  /** Recipients still waiting afterwards. */
  readonly waiting: number;
}

export interface CampaignActivities {
  /**
   * When the campaign is `scheduled` and its time has come: fixes its
   * audience and makes it `sending`. Answers the state afterwards and,
   * while still scheduled, how long until its time.
   */
  startCampaign(companyId: string, campaignId: string): Promise<CampaignStart>;
  /** Hands over the next `size` waiting recipients (only while `sending`). */
  sendCampaignBatch(companyId: string, campaignId: string, size: number): Promise<CampaignBatch>;
  /** Ends the campaign and publishes `campaign.sent` (once). */
  finishCampaign(companyId: string, campaignId: string): Promise<void>;
}
