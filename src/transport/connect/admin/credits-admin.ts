import type { ServiceImpl } from "@connectrpc/connect";
import type { Credits } from "../../../capabilities/credits/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { adjustCreditsCommand } from "./mapping.ts";

/**
 * AdminService handlers of Mail credits. The operator token is checked by
 * the auth interceptor; the rules are in src/capabilities/credits. A company
 * reads its balance and ledger through the CreditsService.
 */
export type CreditsAdmin = Pick<ServiceImpl<typeof AdminService>, "adjustCredits">;

export function creditsAdmin(credits: Credits): CreditsAdmin {
  return {
    async adjustCredits(req) {
      return { balance: BigInt(await credits.adjust(adjustCreditsCommand(req))) };
    },
  };
}
