import type { ServiceImpl } from "@connectrpc/connect";
import type { Credits } from "../../../capabilities/credits/index.ts";
import type { CreditsService } from "../../../gen/mail/v1/credits_pb.js";
import { creditsResponse, ledgerEntryMessage, listLedgerCommand, walletQuery } from "./mapping.ts";

/** CreditsService: the company reads its balance and ledger (API keys, member sessions, operators acting for it). */
export function creditsServiceImpl(credits: Credits): ServiceImpl<typeof CreditsService> {
  return {
    async getCredits(_req, ctx) {
      return creditsResponse(await credits.summary(walletQuery(ctx)));
    },
    async listCreditLedger(req, ctx) {
      const page = await credits.ledger(listLedgerCommand(req, ctx));
      return { items: page.items.map(ledgerEntryMessage), nextCursor: page.nextCursor ?? undefined };
    },
  };
}
