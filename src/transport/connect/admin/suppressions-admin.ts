import type { ServiceImpl } from "@connectrpc/connect";
import type { Suppressions } from "../../../capabilities/suppressions/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { listSuppressionsQuery, removeSuppressionCommand, suppressionMessage } from "./mapping.ts";

/**
 * AdminService handlers of the suppression list. The operator token is
 * checked by the auth interceptor; the rules are in src/capabilities/suppressions.
 */
export type SuppressionsAdmin = Pick<ServiceImpl<typeof AdminService>, "listSuppressions" | "removeSuppression">;

export function suppressionsAdmin(suppressions: Suppressions): SuppressionsAdmin {
  return {
    async listSuppressions(req) {
      return { suppressions: (await suppressions.list(listSuppressionsQuery(req))).map(suppressionMessage) };
    },
    async removeSuppression(req) {
      return { removed: await suppressions.remove(removeSuppressionCommand(req)) };
    },
  };
}
