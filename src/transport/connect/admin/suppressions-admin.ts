import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { SuppressionEntry, Suppressions } from "../../../capabilities/suppressions/index.ts";
import { AdminService, type Suppression, SuppressionSchema } from "../../../gen/mail/v1/admin_pb.js";

/**
 * AdminService handlers of the suppression list. The operator token is
 * checked by the auth interceptor; the rules are in src/capabilities/suppressions.
 */
function suppressionMessage(entry: SuppressionEntry): Suppression {
  return create(SuppressionSchema, {
    email: entry.email,
    reason: entry.reason,
    messageId: entry.messageId ?? undefined,
    createdAt: timestampFromDate(entry.createdAt),
  });
}

export type SuppressionsAdmin = Pick<ServiceImpl<typeof AdminService>, "listSuppressions" | "removeSuppression">;

export function suppressionsAdmin(suppressions: Suppressions): SuppressionsAdmin {
  return {
    async listSuppressions(req) {
      return { suppressions: (await suppressions.list({ companyId: req.companyId })).map(suppressionMessage) };
    },
    async removeSuppression(req) {
      return { removed: await suppressions.remove({ companyId: req.companyId, email: req.email }) };
    },
  };
}
