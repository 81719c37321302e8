import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Config } from "../../../config.ts";
import type { Credits } from "../../../capabilities/credits/index.ts";
import { GetAccountResponseSchema, type MailService } from "../../../gen/mail/v1/mail_pb.js";
import { callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/** The API version indicator returned by GET /mail/v1/me. */
export const API_VERSION = "v1";

/** The limits GET /mail/v1/me reports: the service's configuration. */
export type AccountLimits = Pick<Config, "requestsPerMinute" | "idempotencyWindowHours" | "keyRotationGraceHours">;

export type AccountRpcs = Pick<ServiceImpl<typeof MailService>, "getAccount">;

/** GetAccount (GET /mail/v1/me): the company and key behind the caller (no key for a member session or an operator), the limits and the balance. */
export function accountRpcs(limits: AccountLimits, credits: Pick<Credits, "balance">): AccountRpcs {
  return {
    async getAccount(_req, ctx) {
      const caller = callerOf(ctx);
      const balance = await credits.balance({ companyId: caller.companyId });
      return create(GetAccountResponseSchema, {
        organization: { id: caller.companyId, name: caller.companyName },
        // A member session or an operator has no key: `key` is null for them.
        key:
          caller.actor.kind === "key"
            ? {
                id: caller.keyId,
                name: caller.keyName,
                prefix: caller.keyPrefix,
                scopes: [...caller.scopes],
                expiresAt: optionalTimestamp(caller.expiresAt),
              }
            : undefined,
        entitlements: { api: caller.entitlements.api, smtp: caller.entitlements.smtp },
        limits: {
          requestsPerMinute: limits.requestsPerMinute,
          idempotencyWindowHours: limits.idempotencyWindowHours,
          keyRotationGraceHours: limits.keyRotationGraceHours,
        },
        apiVersion: API_VERSION,
        credits: { balance: BigInt(balance) },
      });
    },
  };
}
