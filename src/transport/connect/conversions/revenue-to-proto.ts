import { create } from "@bufbuild/protobuf";
import { type FieldProblem, ValidationError } from "../../../contract/api-error.ts";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { type CampaignRevenue as CampaignRevenueRecord, type ConversionFilter, formatAmount } from "../../../capabilities/conversions/index.ts";
import { type CampaignRevenue, CampaignRevenueSchema } from "../../../gen/mail/v1/reports_pb.js";

/** What the revenue report calls: ConversionsService (src/capabilities/conversions) fits. */
export interface RevenueReport {
  revenueByCampaign(companyId: string, filter?: ConversionFilter): Promise<CampaignRevenueRecord[]>;
}

/** One row of the report: amounts as exact decimal strings (formatAmount), never through a float. */
export function toCampaignRevenueProto(row: CampaignRevenueRecord): CampaignRevenue {
  return create(CampaignRevenueSchema, {
    campaignId: row.campaignId,
    currency: row.currency,
    conversions: BigInt(row.conversions),
    gross: formatAmount(row.gross),
    refunded: formatAmount(row.refunded),
    net: formatAmount(row.net),
  });
}

/**
 * The period of a report request; an unset bound is no bound. A Timestamp
 * outside the dates JavaScript can hold (a gRPC caller can send one) is 400
 * naming it.
 */
export function revenueFilterOf(req: { readonly since?: Timestamp | undefined; readonly until?: Timestamp | undefined }): ConversionFilter {
  const problems: FieldProblem[] = [];
  const date = (field: "since" | "until"): Date | undefined => {
    const value = req[field];
    if (!value) return undefined;
    const parsed = timestampDate(value);
    if (Number.isNaN(parsed.getTime())) problems.push({ field, problem: "must be a date-time" });
    return parsed;
  };
  const filter = { since: date("since"), until: date("until") };
  if (problems.length > 0) throw new ValidationError(problems);
  return filter;
}
