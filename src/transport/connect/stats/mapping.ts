import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { ValidationError } from "../../../contract/api-error.ts";
import type { StatsCounts as Counts, StatsInterval, StatsLeader, StatsLeaders, StatsLeadersCommand, StatsSeries, StatsSeriesCommand } from "../../../capabilities/stats/index.ts";
import {
  type GetStatsLeadersRequest,
  type GetStatsLeadersResponseSchema,
  type GetStatsRequest,
  type GetStatsResponseSchema,
  type StatsCounts,
  StatsCountsSchema,
  StatsInterval as ProtoInterval,
  type StatsLeader as ProtoLeader,
  StatsLeaderSchema,
} from "../../../gen/mail/v1/stats_pb.js";
import { callerOf } from "../context.ts";

/** The StatsService's proto <-> domain mapping, both directions; the company is the caller's. */

function intervalOf(value: ProtoInterval | undefined): StatsInterval | undefined {
  switch (value) {
    case undefined:
    case ProtoInterval.UNSPECIFIED:
      return undefined;
    case ProtoInterval.HOUR:
      return "hour";
    case ProtoInterval.DAY:
      return "day";
    default:
      throw new ValidationError([{ field: "interval", problem: "must be hour or day" }]);
  }
}

export function seriesCommand(req: GetStatsRequest, ctx: HandlerContext): StatsSeriesCommand {
  return {
    companyId: callerOf(ctx).companyId,
    since: req.since ? timestampDate(req.since) : undefined,
    until: req.until ? timestampDate(req.until) : undefined,
    interval: intervalOf(req.interval),
    tag: req.tag,
    templateId: req.templateId,
  };
}

export function leadersCommand(req: GetStatsLeadersRequest, ctx: HandlerContext): StatsLeadersCommand {
  return {
    companyId: callerOf(ctx).companyId,
    since: req.since ? timestampDate(req.since) : undefined,
    until: req.until ? timestampDate(req.until) : undefined,
    limit: req.limit,
    minSent: req.minSent,
  };
}

function countsMessage(counts: Counts): StatsCounts {
  return create(StatsCountsSchema, {
    accepted: BigInt(counts.accepted),
    sent: BigInt(counts.sent),
    delivered: BigInt(counts.delivered),
    bounced: BigInt(counts.bounced),
    complained: BigInt(counts.complained),
    rejected: BigInt(counts.rejected),
    failed: BigInt(counts.failed),
    suppressed: BigInt(counts.suppressed),
    deferred: BigInt(counts.deferred),
    bounceRate: counts.bounceRate ?? undefined,
    complaintRate: counts.complaintRate ?? undefined,
  });
}

export function seriesResponse(series: StatsSeries): MessageInitShape<typeof GetStatsResponseSchema> {
  return {
    buckets: series.buckets.map((bucket) => ({ start: timestampFromDate(bucket.start), counts: countsMessage(bucket.counts) })),
    totals: countsMessage(series.totals),
    since: timestampFromDate(series.since),
    until: timestampFromDate(series.until),
    interval: series.interval === "hour" ? ProtoInterval.HOUR : ProtoInterval.DAY,
  };
}

function leaderMessage(leader: StatsLeader): ProtoLeader {
  return create(StatsLeaderSchema, { key: leader.key, counts: countsMessage(leader.counts) });
}

export function leadersResponse(leaders: StatsLeaders): MessageInitShape<typeof GetStatsLeadersResponseSchema> {
  return {
    tagsByVolume: leaders.tagsByVolume.map(leaderMessage),
    tagsByBounceRate: leaders.tagsByBounceRate.map(leaderMessage),
    templatesByVolume: leaders.templatesByVolume.map(leaderMessage),
    templatesByBounceRate: leaders.templatesByBounceRate.map(leaderMessage),
    since: timestampFromDate(leaders.since),
    until: timestampFromDate(leaders.until),
  };
}
