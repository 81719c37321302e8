import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type FieldProblem, ValidationError } from "../../../contract/api-error.ts";
import { type CampaignRevenue as CampaignRevenueRecord, formatAmount, type RevenueByCampaignCommand } from "../../../capabilities/conversions/index.ts";
import {
  type CampaignRevenue,
  CampaignRevenueSchema,
  type GetRevenueByCampaignRequest,
  type GetRevenueByCampaignResponse,
  GetRevenueByCampaignResponseSchema,
} from "../../../gen/mail/v1/reports_pb.js";

/**
 * The ReportsService both ways: the request as the conversions
 * capability's command, the report as the contract's answer.
 *
 * The period of a request: an unset bound is no bound. A Timestamp
 * outside the dates JavaScript can hold (a gRPC caller can send one) is 400
 * naming it.
 */
export function revenueByCampaignCommand(companyId: string, req: GetRevenueByCampaignRequest): RevenueByCampaignCommand {
  const problems: FieldProblem[] = [];
  const date = (field: "since" | "until"): Date | undefined => {
    const value = req[field];
    if (!value) return undefined;
    const parsed = timestampDate(value);
    if (Number.isNaN(parsed.getTime())) problems.push({ field, problem: "must be a date-time" });
    return parsed;
  };
  const command = { companyId, since: date("since"), until: date("until") };
  if (problems.length > 0) throw new ValidationError(problems);
  return command;
}

export function toRevenueByCampaignResponse(rows: readonly CampaignRevenueRecord[]): GetRevenueByCampaignResponse {
  return create(GetRevenueByCampaignResponseSchema, { items: rows.map(toCampaignRevenueProto) });
}

/** One row of the report: amounts as exact decimal strings (formatAmount), never through a float. */
function toCampaignRevenueProto(row: CampaignRevenueRecord): CampaignRevenue {
  return create(CampaignRevenueSchema, {
    campaignId: row.campaignId,
    currency: row.currency,
    conversions: BigInt(row.conversions),
    gross: formatAmount(row.gross),
    refunded: formatAmount(row.refunded),
    net: formatAmount(row.net),
  });
}
