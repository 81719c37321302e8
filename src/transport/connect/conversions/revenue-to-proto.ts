import { create } from "@bufbuild/protobuf";
import {
  type CampaignRevenue as CampaignRevenueRecord,
  type ConversionRecord,
  formatAmount,
  type ListContactConversionsCommand,
  type RevenueByCampaignCommand,
} from "../../../capabilities/conversions/index.ts";
import type { Page } from "../../../capabilities/shared/paging.ts";
import {
  type CampaignRevenue,
  CampaignRevenueSchema,
  type GetRevenueByCampaignRequest,
  type GetRevenueByCampaignResponse,
  GetRevenueByCampaignResponseSchema,
  type ListContactConversionsRequest,
  type ListContactConversionsResponse,
  ListContactConversionsResponseSchema,
} from "../../../gen/mail/v1/reports_pb.js";
import { periodOf } from "../timestamps.ts";
import { toConversionProto } from "./conversions-to-proto.ts";

/**
 * The ReportsService both ways: the requests as the conversions
 * capability's commands, the answers as the contract's.
 */
export function revenueByCampaignCommand(companyId: string, req: GetRevenueByCampaignRequest): RevenueByCampaignCommand {
  return { companyId, ...periodOf(req) };
}

export function listContactConversionsCommand(companyId: string, req: ListContactConversionsRequest): ListContactConversionsCommand {
  return { companyId, contactId: req.contactId, limit: req.limit, cursor: req.cursor };
}

export function toListContactConversionsResponse(page: Page<ConversionRecord>): ListContactConversionsResponse {
  return create(ListContactConversionsResponseSchema, { items: page.items.map(toConversionProto), nextCursor: page.nextCursor ?? undefined });
}

export function toRevenueByCampaignResponse(rows: readonly CampaignRevenueRecord[]): GetRevenueByCampaignResponse {
  return create(GetRevenueByCampaignResponseSchema, { items: rows.map(toCampaignRevenueProto) });
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
