import type { ServiceImpl } from "@connectrpc/connect";
import type { DeliveryReports } from "../../../capabilities/delivery-reports/receive-reports.ts";
import type { DeliveryReportsService } from "../../../gen/mail/v1/delivery_reports_pb.js";
import { deliveryReportOf, listReportsCommandOf } from "./mapping.ts";

/**
 * DeliveryReportsService: the reports that changed no status (unmatched and
 * noted), kept 7 days, for operators. `operator_only` (the auth interceptor
 * checks the operator token), served on the operator listener only.
 */
export function deliveryReportsServiceImpl(reports: Pick<DeliveryReports, "list">): ServiceImpl<typeof DeliveryReportsService> {
  return {
    async listDeliveryReports(req) {
      return { reports: (await reports.list(listReportsCommandOf(req))).map(deliveryReportOf) };
    },
  };
}
