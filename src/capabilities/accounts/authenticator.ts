import { ApiError } from "../../contract/api-error.ts";
import { hashApiKey, isWellFormedApiKey, sameKeyHash } from "./api-keys.ts";
import type { KeyUsageRecorder } from "./key-usage-batcher.ts";
import type { ApiKeyCredentials } from "./ports.ts";
import type { ApiKeyAuthenticator, AuthenticatedKey } from "./types.ts";

export interface AuthenticatorOptions {
  readonly credentials: ApiKeyCredentials;
  readonly apiKeyPrefix: string;
  readonly apiKeyPepper: string;
  readonly usage: KeyUsageRecorder;
  readonly clock: () => Date;
}

/**
 * Resolves bearer keys against the stored keys on every call: nothing is
 * cached, so a revocation (or an expiry) done by any process applies to the
 * very next request everywhere.
 */
export class BearerKeyAuthenticator implements ApiKeyAuthenticator {
  readonly #options: AuthenticatorOptions;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
  }

  async authenticate(presentedKey: string): Promise<AuthenticatedKey> {
    const { apiKeyPrefix, apiKeyPepper } = this.#options;
    if (!isWellFormedApiKey(apiKeyPrefix, presentedKey)) {
      throw new ApiError("API_KEY_INVALID", `The API key is malformed: expected "${apiKeyPrefix}_" followed by 43 letters and digits.`);
    }
    const hash = hashApiKey(apiKeyPepper, presentedKey);
    const key = await this.#options.credentials.findByHash(hash);
    // The store found the key by equality already; the constant-time check
    // keeps the decision itself free of data-dependent timing.
    if (!key || !sameKeyHash(key.secretHash, hash) || key.revokedAt !== null) {
      throw new ApiError("API_KEY_INVALID", "The API key is unknown or has been revoked.");
    }
    const now = this.#options.clock();
    const { expiresAt } = key;
    if (expiresAt !== null && expiresAt.getTime() <= now.getTime()) {
      throw new ApiError("API_KEY_EXPIRED", "The API key has expired (past its expiry, or replaced and its grace period has ended).");
    }
    this.#options.usage.record(key.id, now);
    return {
      keyId: key.id,
      keyName: key.name,
      keyPrefix: key.prefix,
      scopes: key.scopes,
      expiresAt,
      companyId: key.company.id,
      companyName: key.company.name,
      entitlements: { api: key.company.entitlements.api, smtp: key.company.entitlements.smtp },
    };
  }
}
