/**
 * TENANT ISOLATION RULE (read before adding a method here or a repository
 * beside it):
 *
 *   Every read of tenant-owned rows takes the caller's `companyId` as its
 *   first argument and puts it in the WHERE clause. There is no
 *   "find by id" on its own: a key id from a URL is only ever looked up
 *   together with the company of the authenticated caller, so another
 *   company's id simply finds nothing (NOT_FOUND), whatever the request.
 *   Writes go through entities obtained that way (or, for new rows, through
 *   the company entity that was itself loaded by its id).
 *
 * The one deliberate exception is authentication (api-key lookup by the hash
 * of the presented secret, in postgres-api-key-credentials.ts beside this file): the key
 * is the credential that *determines* the company, so there is no companyId
 * yet. Keep it the only one.
 */
import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { NewApiKey } from "../../../capabilities/accounts/ports.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { ApiKeySchema, type ApiKey, type Company } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { keysetRows } from "../keyset.ts";

export interface FindKeyOptions {
  /** SELECT ... FOR UPDATE; only inside a transaction. */
  readonly lockForUpdate?: boolean;
}

/**
 * API keys, always per company. Works on the EntityManager it is given (a
 * fork, or the EM of a transaction); the caller flushes.
 */
export class ApiKeyRepository {
  readonly #em: EntityManager;

  constructor(em: EntityManager) {
    this.#em = em;
  }

  /** A page of the key table of one company, oldest first, strictly after `after` when given. */
  async listForCompany(companyId: string, after: KeysetPosition | null, limit: number): Promise<Positioned<ApiKey>[]> {
    if (!isUuid(companyId)) return [];
    const query = this.#em.createQueryBuilder(ApiKeySchema, "k").select("*").where({ company: companyId }).orderBy({ createdAt: "asc", id: "asc" }).limit(limit);
    const rows = await keysetRows(query, { created: "k.created_at", id: "k.id", direction: ">" }, after);
    return rows.map(({ row, position }) => ({ item: this.#em.map(ApiKeySchema, row), position }));
  }

  /** One key of one company; null when it does not exist *for that company*. */
  async findForCompany(companyId: string, keyId: string, options: FindKeyOptions = {}): Promise<ApiKey | null> {
    if (!isUuid(companyId) || !isUuid(keyId)) return null;
    return this.#em.findOne(
      ApiKeySchema,
      { id: keyId, company: companyId },
      options.lockForUpdate ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
    );
  }

  /** Persists a new key of `company` (written by the next flush). */
  createForCompany(company: Company, data: NewApiKey): ApiKey {
    return this.#em.create(ApiKeySchema, { ...data, scopes: [...data.scopes], createdBy: data.createdBy ?? "", company });
  }
}
