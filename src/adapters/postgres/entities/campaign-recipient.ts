import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CampaignSchema } from "./campaign.ts";
import { CompanySchema } from "./company.ts";

/**
 * One contact of a campaign's audience, fixed when sending starts (one row
 * per contact, whatever lists it is in). Its id is the id of the message
 * its copy becomes, so a retried handoff finds the copy it made. `outcome`
 * is what the campaign.sent counters count; the engagement columns
 * (opened_at, clicked_at, unsubscribed_at) are set by tracking and
 * unsubscribe (CampaignEngagementPort).
 */
export const CampaignRecipientSchema = defineEntity({
  name: "CampaignRecipient",
  tableName: "campaign_recipient",
  properties: {
    id: p.uuid().primary(),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("campaign_recipient_company_id_fkey"),
    campaign: () =>
      p.manyToOne(CampaignSchema).fieldName("campaign_id").deleteRule("cascade").foreignKeyName("campaign_recipient_campaign_id_fkey"),
    // No foreign key: the campaign's record outlives a deleted contact.
    contactId: p.uuid(),
    email: p.text(),
    outcome: p.text().check("outcome IN ('waiting', 'accepted', 'failed', 'unknown', 'suppressed', 'skipped')"),
    handedOverAt: p.datetime().nullable(),
    openedAt: p.datetime().nullable(),
    clickedAt: p.datetime().nullable(),
    unsubscribedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  uniques: [{ properties: ["campaign", "contactId"], name: "campaign_recipient_contact_key" }],
  indexes: [{ properties: ["company", "campaign", "outcome", "id"], name: "campaign_recipient_outcome_index" }],
});

export type CampaignRecipient = InferEntity<typeof CampaignRecipientSchema>;
