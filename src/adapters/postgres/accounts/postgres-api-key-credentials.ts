import type { ApiKeyCredentials, KeyCredential } from "../../../capabilities/accounts/ports.ts";
import { toDate, type Pool } from "../sql.ts";

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
 * api-key-repository.ts): the presented key is what tells us the company.
 * One unique-index probe joined to the company, plain SQL on the hot path.
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

export class PostgresApiKeyCredentials implements ApiKeyCredentials {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async findByHash(secretHash: Buffer): Promise<KeyCredential | null> {
    const pool = await this.#pool();
    const { rows } = await pool.query<KeyRow>({ ...LOOKUP, values: [secretHash] });
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      scopes: row.scopes,
      secretHash: row.secret_hash,
      expiresAt: toDate(row.expires_at),
      revokedAt: toDate(row.revoked_at),
      company: { id: row.company_id, name: row.company_name, entitlements: { api: row.entitlement_api, smtp: row.entitlement_smtp } },
    };
  }
}
