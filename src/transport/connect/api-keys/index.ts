import type { ServiceImpl } from "@connectrpc/connect";
import type { ApiKeys } from "../../../capabilities/accounts/index.ts";
import type { ApiKeysService } from "../../../gen/mail/v1/api_keys_pb.js";
import {
  createApiKeyCommand,
  createApiKeyResponse,
  listApiKeysCommand,
  listApiKeysResponse,
  revokeApiKeyCommand,
  revokeApiKeyResponse,
  rotateApiKeyCommand,
  rotateApiKeyResponse,
} from "./mapping.ts";

/**
 * The company's ApiKeysService: owner/admin sessions and operators (API
 * keys are refused by the contract's refuse_api_keys, in the auth step).
 */
export function apiKeysServiceImpl(keys: ApiKeys): ServiceImpl<typeof ApiKeysService> {
  return {
    async listApiKeys(req, ctx) {
      return listApiKeysResponse(await keys.list(listApiKeysCommand(req, ctx)));
    },
    async createApiKey(req, ctx) {
      return createApiKeyResponse(await keys.create(createApiKeyCommand(req, ctx)));
    },
    async rotateApiKey(req, ctx) {
      return rotateApiKeyResponse(await keys.rotate(rotateApiKeyCommand(req, ctx)));
    },
    async revokeApiKey(req, ctx) {
      return revokeApiKeyResponse(await keys.revoke(revokeApiKeyCommand(req, ctx)));
    },
  };
}
