import type { ServiceImpl } from "@connectrpc/connect";
import type { Campaigns } from "../../../capabilities/campaigns/index.ts";
import type { CampaignsService } from "../../../gen/mail/v1/campaigns_pb.js";
import {
  campaignChange,
  campaignMessage,
  campaignQuery,
  createCampaignCommand,
  listCampaignsCommand,
  resultsMessage,
  scheduleCampaignCommand,
  sendCampaignTestCommand,
  updateCampaignCommand,
} from "./mapping.ts";

/** CampaignsService: API keys, member sessions and operators acting for the company (one handler per RPC). */
export function campaignsServiceImpl(campaigns: Campaigns): ServiceImpl<typeof CampaignsService> {
  return {
    async createCampaign(req, ctx) {
      return { campaign: campaignMessage(await campaigns.create(createCampaignCommand(req, ctx))) };
    },
    async updateCampaign(req, ctx) {
      return { campaign: campaignMessage(await campaigns.update(updateCampaignCommand(req, ctx))) };
    },
    async getCampaign(req, ctx) {
      return { campaign: campaignMessage(await campaigns.get(campaignQuery(req, ctx))) };
    },
    async listCampaigns(req, ctx) {
      const page = await campaigns.list(listCampaignsCommand(req, ctx));
      return { items: page.items.map(campaignMessage), nextCursor: page.nextCursor ?? undefined };
    },
    async previewCampaignAudience(req, ctx) {
      return { ...(await campaigns.previewAudience(campaignQuery(req, ctx))) };
    },
    async sendCampaignTest(req, ctx) {
      return { ...(await campaigns.sendTest(sendCampaignTestCommand(req, ctx))) };
    },
    async scheduleCampaign(req, ctx) {
      return { campaign: campaignMessage(await campaigns.schedule(scheduleCampaignCommand(req, ctx))) };
    },
    async pauseCampaign(req, ctx) {
      return { campaign: campaignMessage(await campaigns.pause(campaignChange(req, ctx))) };
    },
    async resumeCampaign(req, ctx) {
      return { campaign: campaignMessage(await campaigns.resume(campaignChange(req, ctx))) };
    },
    async cancelCampaign(req, ctx) {
      return { campaign: campaignMessage(await campaigns.cancel(campaignChange(req, ctx))) };
    },
    async getCampaignResults(req, ctx) {
      return resultsMessage(await campaigns.results(campaignQuery(req, ctx)));
    },
  };
}
