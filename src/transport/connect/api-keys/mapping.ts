import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type ApiKeyStatus as DomainKeyStatus,
  type ApiKeyView,
  type CreateApiKeyCommand,
  type CreatedApiKey,
  type ListApiKeysCommand,
  type ListApiKeysResult,
  type RevokeApiKeyCommand,
  type RotateApiKeyCommand,
  type RotatedApiKey,
} from "../../../capabilities/accounts/index.ts";
import { grantableScopes } from "../../../capabilities/accounts/principal.ts";
import {
  type ApiKey,
  ApiKeySchema,
  ApiKeyStatus,
  type CreateApiKeyRequest,
  type CreateApiKeyResponseSchema,
  type ListApiKeysRequest,
  type ListApiKeysResponseSchema,
  type RevokeApiKeyRequest,
  type RevokeApiKeyResponseSchema,
  type RotateApiKeyRequest,
  type RotateApiKeyResponseSchema,
} from "../../../gen/mail/v1/api_keys_pb.js";
import { auditContextOf, callerOf } from "../context.ts";
import { optionalTimestamp } from "../timestamps.ts";

/**
 * The ApiKeysService's proto <-> domain mapping, both directions. The
 * company and the actor come from the principal, never from the request.
 */

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

export function listApiKeysCommand(req: ListApiKeysRequest, ctx: HandlerContext): ListApiKeysCommand {
  return { companyId: callerOf(ctx).companyId, limit: req.limit, cursor: req.cursor };
}

export function listApiKeysResponse(page: ListApiKeysResult): MessageInitShape<typeof ListApiKeysResponseSchema> {
  return { items: page.items.map(apiKeyMessage), nextCursor: page.nextCursor ?? undefined };
}

export function createApiKeyCommand(req: CreateApiKeyRequest, ctx: HandlerContext): CreateApiKeyCommand {
  const caller = callerOf(ctx);
  return {
    companyId: caller.companyId,
    audit: auditContextOf(ctx),
    grantableScopes: grantableScopes(caller),
    name: req.name,
    scopes: req.scopes,
    expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : null,
  };
}

export function createApiKeyResponse(created: CreatedApiKey): MessageInitShape<typeof CreateApiKeyResponseSchema> {
  return { key: apiKeyMessage(created.key), secret: created.secret };
}

export function rotateApiKeyCommand(req: RotateApiKeyRequest, ctx: HandlerContext): RotateApiKeyCommand {
  const caller = callerOf(ctx);
  return { companyId: caller.companyId, audit: auditContextOf(ctx), grantableScopes: grantableScopes(caller), keyId: req.id, graceHours: req.graceHours };
}

export function rotateApiKeyResponse(rotated: RotatedApiKey): MessageInitShape<typeof RotateApiKeyResponseSchema> {
  return { key: apiKeyMessage(rotated.key), secret: rotated.secret, replaced: apiKeyMessage(rotated.previous) };
}

export function revokeApiKeyCommand(req: RevokeApiKeyRequest, ctx: HandlerContext): RevokeApiKeyCommand {
  return { companyId: callerOf(ctx).companyId, audit: auditContextOf(ctx), keyId: req.id };
}

export function revokeApiKeyResponse(revoked: ApiKeyView): MessageInitShape<typeof RevokeApiKeyResponseSchema> {
  return { key: apiKeyMessage(revoked) };
}
