import type { ServiceImpl } from "@connectrpc/connect";
import type { ReportsService } from "../../../gen/mail/v1/reports_pb.js";
import { callerOf } from "../context.ts";
import { type RevenueReport, revenueFilterOf, toCampaignRevenueProto } from "./revenue-to-proto.ts";

/**
 * The ReportsService (scope mail.admin, checked by the auth interceptor from
 * the contract): the revenue report of the calling key's company.
 */
export function reportsServiceImpl(report: RevenueReport): ServiceImpl<typeof ReportsService> {
  return {
    async getRevenueByCampaign(req, ctx) {
      const rows = await report.revenueByCampaign(callerOf(ctx).companyId, revenueFilterOf(req));
      return { items: rows.map(toCampaignRevenueProto) };
    },
  };
}
