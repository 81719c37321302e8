import { StatsInterval } from "../../../gen/mail/v1/stats_pb.js";
import { toCampaignRevenueProto } from "../conversions/revenue-to-proto.ts";
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CampaignChangeCommand,
  CampaignCounters as DomainCounters,
  CampaignFields,
  CampaignQuery,
  CampaignRecord,
  CampaignResults,
  CampaignState as DomainState,
  CreateCampaignCommand,
  ListCampaignsCommand,
  ScheduleCampaignCommand,
  SendCampaignTestCommand,
  UpdateCampaignCommand,
} from "../../../capabilities/campaigns/index.ts";
import {
  type Campaign,
  type CampaignAudience,
  type CampaignContent,
  type CampaignCounters,
  CampaignCountersSchema,
  CampaignSchema,
  CampaignState,
  CampaignStateSchema,
  type CreateCampaignRequest,
  type GetCampaignResultsResponse,
  GetCampaignResultsResponseSchema,
  type ListCampaignsRequest,
  type ScheduleCampaignRequest,
  type UpdateCampaignRequest,
} from "../../../gen/mail/v1/campaigns_pb.js";
import { enumFilterOf } from "../enum-filters.ts";
import { auditContextOf, callerOf } from "../context.ts";

/** The CampaignsService's proto <-> domain mapping, both directions; the company is the caller's. */

const STATE_TO_PROTO: Record<DomainState, CampaignState> = {
  draft: CampaignState.DRAFT,
  scheduled: CampaignState.SCHEDULED,
  sending: CampaignState.SENDING,
  paused: CampaignState.PAUSED,
  sent: CampaignState.SENT,
  cancelled: CampaignState.CANCELLED,
};

export function countersMessage(counters: DomainCounters): CampaignCounters {
  return create(CampaignCountersSchema, { ...counters });
}

export function campaignMessage(campaign: CampaignRecord): Campaign {
  return create(CampaignSchema, {
    id: campaign.id,
    name: campaign.name,
    state: STATE_TO_PROTO[campaign.state],
    audience: { listIds: [...campaign.listIds], tag: campaign.tag ?? undefined },
    content: {
      templateId: campaign.templateId ?? undefined,
      subject: campaign.subject ?? undefined,
      html: campaign.html ?? undefined,
      text: campaign.text ?? undefined,
    },
    senderId: campaign.senderId ?? undefined,
    replyTo: campaign.replyTo ?? undefined,
    trackOpens: campaign.trackOpens,
    trackClicks: campaign.trackClicks,
    sendAt: campaign.sendAt ? timestampFromDate(campaign.sendAt) : undefined,
    startedAt: campaign.startedAt ? timestampFromDate(campaign.startedAt) : undefined,
    finishedAt: campaign.finishedAt ? timestampFromDate(campaign.finishedAt) : undefined,
    counters: countersMessage(campaign.counters),
    createdAt: timestampFromDate(campaign.createdAt),
    updatedAt: timestampFromDate(campaign.updatedAt),
  });
}

export function resultsMessage(results: CampaignResults): GetCampaignResultsResponse {
  return create(GetCampaignResultsResponseSchema, {
    counters: countersMessage(results.counters),
    opened: results.opened,
    clicked: results.clicked,
    unsubscribed: results.unsubscribed,
    links: results.links.map((link) => ({ linkId: link.linkId, url: link.url, clicks: link.clicks, clickers: link.clickers, suspectClicks: link.suspectClicks })),
    revenue: results.revenue.map(toCampaignRevenueProto),
    interval: results.interval === "hour" ? StatsInterval.HOUR : StatsInterval.DAY,
    timeline: results.timeline.map((bucket) => ({ start: timestampFromDate(bucket.start), opens: bucket.opens, clicks: bucket.clicks })),
  });
}

function fieldsOf(req: {
  name?: string | undefined;
  audience?: CampaignAudience | undefined;
  content?: CampaignContent | undefined;
  senderId?: string | undefined;
  replyTo?: string | undefined;
  trackOpens?: boolean | undefined;
  trackClicks?: boolean | undefined;
}): CampaignFields {
  return {
    name: req.name,
    audience: req.audience ? { listIds: req.audience.listIds, tag: req.audience.tag } : undefined,
    content: req.content
      ? { templateId: req.content.templateId, subject: req.content.subject, html: req.content.html, text: req.content.text }
      : undefined,
    senderId: req.senderId,
    replyTo: req.replyTo,
    trackOpens: req.trackOpens,
    trackClicks: req.trackClicks,
  };
}

export function createCampaignCommand(req: CreateCampaignRequest, ctx: HandlerContext): CreateCampaignCommand {
  return { ...fieldsOf(req), companyId: callerOf(ctx).companyId, audit: auditContextOf(ctx) };
}

export function updateCampaignCommand(req: UpdateCampaignRequest, ctx: HandlerContext): UpdateCampaignCommand {
  return { ...fieldsOf(req), companyId: callerOf(ctx).companyId, campaignId: req.id, audit: auditContextOf(ctx) };
}

export function campaignQuery(req: { id: string }, ctx: HandlerContext): CampaignQuery {
  return { companyId: callerOf(ctx).companyId, campaignId: req.id };
}

export function campaignChange(req: { id: string }, ctx: HandlerContext): CampaignChangeCommand {
  return { ...campaignQuery(req, ctx), audit: auditContextOf(ctx) };
}

export function listCampaignsCommand(req: ListCampaignsRequest, ctx: HandlerContext): ListCampaignsCommand {
  return {
    companyId: callerOf(ctx).companyId,
    limit: req.limit,
    cursor: req.cursor,
    state: enumFilterOf<DomainState>(CampaignStateSchema, req.state),
  };
}

export function scheduleCampaignCommand(req: ScheduleCampaignRequest, ctx: HandlerContext): ScheduleCampaignCommand {
  return { ...campaignChange(req, ctx), sendAt: req.sendAt ? timestampDate(req.sendAt) : undefined };
}

export function sendCampaignTestCommand(req: { id: string }, ctx: HandlerContext): SendCampaignTestCommand {
  return { ...campaignChange(req, ctx), actor: callerOf(ctx).actor };
}
