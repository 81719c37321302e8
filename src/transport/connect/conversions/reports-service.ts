import type { ServiceImpl } from "@connectrpc/connect";
import type { Conversions } from "../../../capabilities/conversions/index.ts";
import type { ReportsService } from "../../../gen/mail/v1/reports_pb.js";
import { callerOf } from "../context.ts";
import { revenueByCampaignCommand, toRevenueByCampaignResponse } from "./revenue-to-proto.ts";

/**
 * The ReportsService (scope mail.admin, checked by the auth interceptor from
 * the contract): the revenue report of the caller's company.
 */
export function reportsServiceImpl(report: Pick<Conversions, "revenueByCampaign">): ServiceImpl<typeof ReportsService> {
  return {
    async getRevenueByCampaign(req, ctx) {
      return toRevenueByCampaignResponse(await report.revenueByCampaign(revenueByCampaignCommand(callerOf(ctx).companyId, req)));
    },
  };
}
