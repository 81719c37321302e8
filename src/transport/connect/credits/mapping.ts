import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { CreditsSummary, LedgerEntry, LedgerReason, ListLedgerCommand, WalletQuery } from "../../../capabilities/credits/index.ts";
import {
  type CreditLedgerEntry,
  CreditLedgerEntrySchema,
  CreditLedgerReason,
  CreditLedgerReasonSchema,
  type GetCreditsResponseSchema,
  type ListCreditLedgerRequest,
} from "../../../gen/mail/v1/credits_pb.js";
import { enumFilterOf } from "../enum-filters.ts";
import { callerOf } from "../context.ts";

/** The CreditsService's proto <-> domain mapping, both directions; the company is the caller's. */

const TO_PROTO: Record<LedgerReason, CreditLedgerReason> = {
  charge: CreditLedgerReason.CHARGE,
  refund: CreditLedgerReason.REFUND,
  grant: CreditLedgerReason.GRANT,
  adjustment: CreditLedgerReason.ADJUSTMENT,
};

export function walletQuery(ctx: HandlerContext): WalletQuery {
  return { companyId: callerOf(ctx).companyId };
}

export function creditsResponse(summary: CreditsSummary): MessageInitShape<typeof GetCreditsResponseSchema> {
  return { balance: BigInt(summary.balance), lowBalanceThreshold: BigInt(summary.lowThreshold), low: summary.low };
}

export function listLedgerCommand(req: ListCreditLedgerRequest, ctx: HandlerContext): ListLedgerCommand {
  return { companyId: callerOf(ctx).companyId, limit: req.limit, cursor: req.cursor, reason: enumFilterOf<LedgerReason>(CreditLedgerReasonSchema, req.reason) };
}

export function ledgerEntryMessage(entry: LedgerEntry): CreditLedgerEntry {
  return create(CreditLedgerEntrySchema, {
    id: String(entry.id),
    delta: BigInt(entry.delta),
    reason: TO_PROTO[entry.reason],
    messageId: entry.messageId ?? undefined,
    note: entry.note,
    createdAt: timestampFromDate(entry.createdAt),
  });
}
