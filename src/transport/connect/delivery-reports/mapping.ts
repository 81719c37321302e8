import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ListReportsCommand } from "../../../capabilities/delivery-reports/receive-reports.ts";
import type { StoredReport } from "../../../capabilities/delivery-reports/ports.ts";
import type { DeliveryReportSchema, ListDeliveryReportsRequest } from "../../../gen/mail/v1/delivery_reports_pb.js";

/** DeliveryReportsService between the contract and the delivery-reports capability, both ways. */

export function listReportsCommandOf(req: ListDeliveryReportsRequest): ListReportsCommand {
  return { companyId: req.companyId, kind: req.kind, limit: req.limit };
}

/** A kept report as the contract's DeliveryReport: what it does not name is empty. */
export function deliveryReportOf(report: StoredReport): MessageInitShape<typeof DeliveryReportSchema> {
  return {
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
  };
}
