import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { DeliveryReports } from "../../../capabilities/delivery-reports/receive-reports.ts";
import type { DeliveryReportsService } from "../../../gen/mail/v1/delivery_reports_pb.js";

/**
 * DeliveryReportsService: the reports that changed no status (unmatched and
 * noted), kept 7 days, for operators. `operator_only` (the auth interceptor
 * checks the operator token), served on the operator listener only.
 */
export function deliveryReportsServiceImpl(reports: DeliveryReports): ServiceImpl<typeof DeliveryReportsService> {
  return {
    async listDeliveryReports(req) {
      const kept = await reports.list({ companyId: req.companyId, kind: req.kind, limit: req.limit });
      return {
        reports: kept.map((report) => ({
          id: report.id,
          source: report.source,
          kind: report.kind,
          reason: report.reason,
          companyId: report.companyId ?? "",
          messageId: report.messageId ?? "",
          from: report.summary.from ?? "",
          subject: report.summary.subject ?? "",
          excerpt: report.summary.excerpt,
          receivedAt: timestampFromDate(report.receivedAt),
          expiresAt: timestampFromDate(report.expiresAt),
        })),
      };
    },
  };
}
