import type { ServiceImpl } from "@connectrpc/connect";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { type RevenueReport, revenueFilterOf, toCampaignRevenueProto } from "../conversions/index.ts";

/** AdminService.GetRevenueByCampaign: the ReportsService's report, for operators (the company is a field and must exist). */
export type ReportsAdmin = Pick<ServiceImpl<typeof AdminService>, "getRevenueByCampaign">;

export function reportsAdmin(report: RevenueReport, company: (req: { companyId: string }) => Promise<string>): ReportsAdmin {
  return {
    async getRevenueByCampaign(req) {
      const companyId = await company(req);
      return { items: (await report.revenueByCampaign(companyId, revenueFilterOf(req))).map(toCampaignRevenueProto) };
    },
  };
}
