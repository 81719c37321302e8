import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { ValidationError } from "../../../contract/api-error.ts";
import { type Credits, type LedgerEntry, MAX_ADJUSTMENT } from "../../../capabilities/credits/index.ts";
import { AdminService, type LedgerEntry as LedgerEntryMessage, LedgerEntrySchema } from "../../../gen/mail/v1/admin_pb.js";

/**
 * AdminService handlers of Mail credits. The operator token is checked by
 * the auth interceptor; the rules are in src/capabilities/credits.
 */
function ledgerEntryMessage(entry: LedgerEntry): LedgerEntryMessage {
  return create(LedgerEntrySchema, {
    delta: BigInt(entry.delta),
    reason: entry.reason,
    messageId: entry.messageId ?? undefined,
    note: entry.note,
    createdAt: timestampFromDate(entry.createdAt),
  });
}

/** int64 on the wire, a safe integer in the domain: refuse what would lose precision. */
function amountOf(amount: bigint): number {
  if (amount > BigInt(MAX_ADJUSTMENT) || amount < -BigInt(MAX_ADJUSTMENT)) {
    throw new ValidationError([{ field: "amount", problem: `must be between -${MAX_ADJUSTMENT} and ${MAX_ADJUSTMENT}` }]);
  }
  return Number(amount);
}

export type CreditsAdmin = Pick<ServiceImpl<typeof AdminService>, "adjustCredits" | "getWallet">;

export function creditsAdmin(credits: Credits): CreditsAdmin {
  return {
    async adjustCredits(req) {
      return { balance: BigInt(await credits.adjust({ companyId: req.companyId, amount: amountOf(req.amount), note: req.note })) };
    },
    async getWallet(req) {
      const wallet = await credits.wallet({ companyId: req.companyId });
      return { balance: BigInt(wallet.balance), ledger: wallet.ledger.map(ledgerEntryMessage) };
    },
  };
}
