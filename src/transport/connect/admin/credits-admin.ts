import type { ServiceImpl } from "@connectrpc/connect";
import { ValidationError } from "../../../contract/api-error.ts";
import { type Credits, MAX_ADJUSTMENT } from "../../../capabilities/credits/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";

/**
 * AdminService handlers of Mail credits. The operator token is checked by
 * the auth interceptor; the rules are in src/capabilities/credits. A company
 * reads its balance and ledger through the CreditsService.
 */

/** int64 on the wire, a safe integer in the domain: refuse what would lose precision. */
function amountOf(amount: bigint): number {
  if (amount > BigInt(MAX_ADJUSTMENT) || amount < -BigInt(MAX_ADJUSTMENT)) {
    throw new ValidationError([{ field: "amount", problem: `must be between -${MAX_ADJUSTMENT} and ${MAX_ADJUSTMENT}` }]);
  }
  return Number(amount);
}

export type CreditsAdmin = Pick<ServiceImpl<typeof AdminService>, "adjustCredits">;

export function creditsAdmin(credits: Credits): CreditsAdmin {
  return {
    async adjustCredits(req) {
      return { balance: BigInt(await credits.adjust({ companyId: req.companyId, amount: amountOf(req.amount), note: req.note })) };
    },
  };
}
