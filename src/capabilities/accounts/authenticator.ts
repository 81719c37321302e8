import { ApiError } from "../../contract/api-error.ts";
import { toDate, type Pool } from "../../adapters/postgres/sql.ts";
import { hashApiKey, isWellFormedApiKey, sameKeyHash } from "./api-keys.ts";
import type { KeyUsageRecorder } from "./key-usage-batcher.ts";
import type { ApiKeyAuthenticator, AuthenticatedKey } from "./types.ts";

export interface AuthenticatorOptions {
  readonly pool: () => Promise<Pool>;
  readonly apiKeyPrefix: string;
  readonly apiKeyPepper: string;
  readonly usage: KeyUsageRecorder;
  readonly clock: () => Date;
}

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  secret_hash: Buffer;
  expires_at: string | Date | null;
  revoked_at: string | Date | null;
  company_id: string;
  company_name: string;
  entitlement_api: boolean;
  entitlement_smtp: boolean;
}

/**
 * The only read of api_key that is not scoped by company (see the rule in
 * src/persistence/repositories/api-key-repository.ts): the presented key is
 * what tells us the company. One unique-index probe joined to the company.
 */
const LOOKUP = {
  // Named: each pooled connection prepares it once.
  name: "api_key_authenticate",
  text: `select k.id, k.name, k.prefix, k.scopes, k.secret_hash, k.expires_at, k.revoked_at,
                c.id as company_id, c.name as company_name, c.entitlement_api, c.entitlement_smtp
           from api_key k
           join company c on c.id = k.company_id
          where k.secret_hash = $1`,
};

/**
 * Resolves bearer keys against the database on every call: nothing is
 * cached, so a revocation (or an expiry) done by any process applies to the
 * very next request everywhere.
 */
export class PostgresApiKeyAuthenticator implements ApiKeyAuthenticator {
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
    const pool = await this.#options.pool();
    const { rows } = await pool.query<KeyRow>({ ...LOOKUP, values: [hash] });
    const row = rows[0];
    // The index found the row by equality already; the constant-time check
    // keeps the decision itself free of data-dependent timing.
    if (!row || !sameKeyHash(row.secret_hash, hash) || row.revoked_at !== null) {
      throw new ApiError("API_KEY_INVALID", "The API key is unknown or has been revoked.");
    }
    const now = this.#options.clock();
    const expiresAt = toDate(row.expires_at);
    if (expiresAt !== null && expiresAt.getTime() <= now.getTime()) {
      throw new ApiError("API_KEY_EXPIRED", "The API key has expired (past its expiry, or replaced and its grace period has ended).");
    }
    this.#options.usage.record(row.id, now);
    return {
      keyId: row.id,
      keyName: row.name,
      keyPrefix: row.prefix,
      scopes: row.scopes,
      expiresAt,
      companyId: row.company_id,
      companyName: row.company_name,
      entitlements: { api: row.entitlement_api, smtp: row.entitlement_smtp },
    };
  }
}
