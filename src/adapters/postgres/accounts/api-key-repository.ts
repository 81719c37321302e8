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
import { ApiKeySchema, type ApiKey, type Company } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

export interface NewApiKey {
  readonly name: string;
  readonly prefix: string;
  readonly secretHash: Buffer;
  readonly scopes: readonly string[];
  readonly expiresAt: Date | null;
  /** Who created it (a member's email, `operator`, `rotation of <prefix>`); empty when unknown. */
  readonly createdBy?: string;
}

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

  /** The key table of one company, oldest first. */
  async listForCompany(companyId: string): Promise<ApiKey[]> {
    if (!isUuid(companyId)) return [];
    return this.#em.find(ApiKeySchema, { company: companyId }, { orderBy: { createdAt: "asc", id: "asc" } });
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
