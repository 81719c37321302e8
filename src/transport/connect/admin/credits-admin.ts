import type { ServiceImpl } from "@connectrpc/connect";
import type { Credits } from "../../../capabilities/credits/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { adjustCreditsCommand, ledgerEntryMessage, walletQuery } from "./mapping.ts";

/**
 * AdminService handlers of Mail credits. The operator token is checked by
 * the auth interceptor; the rules are in src/capabilities/credits.
 */
export type CreditsAdmin = Pick<ServiceImpl<typeof AdminService>, "adjustCredits" | "getWallet">;

export function creditsAdmin(credits: Credits): CreditsAdmin {
  return {
    async adjustCredits(req) {
      return { balance: BigInt(await credits.adjust(adjustCreditsCommand(req))) };
    },
    async getWallet(req) {
      const wallet = await credits.wallet(walletQuery(req));
      return { balance: BigInt(wallet.balance), ledger: wallet.ledger.map(ledgerEntryMessage) };
    },
  };
}
