import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { type AccountsService, type ApiKeyStatus as DomainKeyStatus, type ApiKeyView } from "../../../capabilities/accounts/index.ts";
import { type ApiKey, ApiKeySchema, ApiKeyStatus, ApiKeysService } from "../../../gen/mail/v1/api_keys_pb.js";
import { grantableScopes } from "../../../capabilities/accounts/principal.ts";
import { auditContextOf, callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

const STATUS: Record<DomainKeyStatus, ApiKeyStatus> = {
  active: ApiKeyStatus.ACTIVE,
  revoked: ApiKeyStatus.REVOKED,
  expired: ApiKeyStatus.EXPIRED,
};

/** A row of the key table as the contract has it (never the secret). */
export function apiKeyMessage(view: ApiKeyView): ApiKey {
  return create(ApiKeySchema, {
    id: view.id,
    companyId: view.companyId,
    name: view.name,
    prefix: view.prefix,
    scopes: [...view.scopes],
    createdAt: optionalTimestamp(view.createdAt),
    lastUsedAt: optionalTimestamp(view.lastUsedAt),
    expiresAt: optionalTimestamp(view.expiresAt),
    revokedAt: optionalTimestamp(view.revokedAt),
    replacedById: view.replacedById ?? undefined,
    status: STATUS[view.status],
    createdBy: view.createdBy,
  });
}

/**
 * The company's ApiKeysService: owner/admin sessions and operators (API
 * keys are refused by the contract's refuse_api_keys, in the auth step).
 * The company and the actor come from the principal, never from the request.
 */
export function apiKeysServiceImpl(accounts: AccountsService): ServiceImpl<typeof ApiKeysService> {
  return {
    async listApiKeys(_req, ctx) {
      return { items: (await accounts.listApiKeys(callerOf(ctx).companyId)).map(apiKeyMessage) };
    },
    async createApiKey(req, ctx) {
      const caller = callerOf(ctx);
      const created = await accounts.createKey({
        companyId: caller.companyId,
        audit: auditContextOf(ctx),
        name: req.name,
        scopes: req.scopes,
        expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : null,
        grantableScopes: grantableScopes(caller),
      });
      return { key: apiKeyMessage(created.key), secret: created.secret };
    },
    async rotateApiKey(req, ctx) {
      const caller = callerOf(ctx);
      const rotated = await accounts.rotateKey({
        companyId: caller.companyId,
        audit: auditContextOf(ctx),
        keyId: req.id,
        graceHours: req.graceHours,
        grantableScopes: grantableScopes(caller),
      });
      return { key: apiKeyMessage(rotated.key), secret: rotated.secret, replaced: apiKeyMessage(rotated.previous) };
    },
    async revokeApiKey(req, ctx) {
      return { key: apiKeyMessage(await accounts.revokeKey({ companyId: callerOf(ctx).companyId, audit: auditContextOf(ctx), keyId: req.id })) };
    },
  };
}
