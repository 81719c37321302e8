import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * A campaign of a company (CampaignsService): its audience (lists, tag),
 * content (a template or subject + bodies), sender, tracking and state.
 * Written and read through MikroORM (src/adapters/postgres/campaigns/).
 * Counters are read from its recipients (campaign_recipient), fixed when
 * sending starts.
 */
export const CampaignSchema = defineEntity({
  name: "Campaign",
  tableName: "campaign",
  properties: {
    // Chosen before the row exists: it names the campaign's workflow too.
    id: p.uuid().primary(),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("campaign_company_id_fkey"),
    name: p.text(),
    state: p.text().check("state IN ('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled')"),
    listIds: p.array().columnType("uuid[]"),
    tag: p.text().nullable(),
    // No foreign key: a template deleted after the campaign was written is found missing when it sends.
    templateId: p.uuid().nullable(),
    subject: p.text().nullable(),
    html: p.text().nullable(),
    text: p.text().nullable().fieldName("text_body"),
    senderId: p.uuid().nullable(),
    replyTo: p.text().nullable(),
    trackOpens: p.boolean().default(false),
    trackClicks: p.boolean().default(false),
    sendAt: p.datetime().nullable(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    /** Outbox marker: null while the campaign's workflow is not known to exist (a scheduled campaign whose start failed). */
    workflowStartedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    updatedAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  indexes: [
    {
      name: "campaign_list_index",
      expression: "CREATE INDEX campaign_list_index ON public.campaign USING btree (company_id, created_at DESC, id DESC)",
    },
  ],
});

export type Campaign = InferEntity<typeof CampaignSchema>;
