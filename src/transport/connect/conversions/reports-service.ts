import type { ServiceImpl } from "@connectrpc/connect";
import type { Conversions } from "../../../capabilities/conversions/index.ts";
import type { ReportsService } from "../../../gen/mail/v1/reports_pb.js";
import { callerOf } from "../context.ts";
import {
  listContactConversionsCommand,
  revenueByCampaignCommand,
  toListContactConversionsResponse,
  toRevenueByCampaignResponse,
} from "./revenue-to-proto.ts";

/**
 * The ReportsService (scopes from the contract, checked by the auth
 * interceptor): the revenue report and one contact's conversions, of the
 * caller's company.
 */
export function reportsServiceImpl(report: Pick<Conversions, "revenueByCampaign" | "listForContact">): ServiceImpl<typeof ReportsService> {
  return {
    async getRevenueByCampaign(req, ctx) {
      return toRevenueByCampaignResponse(await report.revenueByCampaign(revenueByCampaignCommand(callerOf(ctx).companyId, req)));
    },
    async listContactConversions(req, ctx) {
      return toListContactConversionsResponse(await report.listForContact(listContactConversionsCommand(callerOf(ctx).companyId, req)));
    },
  };
}
