import type { ServiceImpl } from "@connectrpc/connect";
import type { MailStatistics } from "../../../capabilities/stats/index.ts";
import type { StatsService } from "../../../gen/mail/v1/stats_pb.js";
import { leadersCommand, leadersResponse, seriesCommand, seriesResponse } from "./mapping.ts";

/** StatsService: the company reads its sending statistics (API keys, member sessions, operators acting for it). */
export function statsServiceImpl(statistics: MailStatistics): ServiceImpl<typeof StatsService> {
  return {
    async getStats(req, ctx) {
      return seriesResponse(await statistics.series(seriesCommand(req, ctx)));
    },
    async getStatsLeaders(req, ctx) {
      return leadersResponse(await statistics.leaders(leadersCommand(req, ctx)));
    },
  };
}
