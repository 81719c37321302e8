import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { ApiKey, Company } from "../../adapters/postgres/entities/index.ts";
import { ApiKeyRepository } from "../../adapters/postgres/repositories/api-key-repository.ts";
import { CompanyRepository } from "../../adapters/postgres/repositories/company-repository.ts";
import { generateApiKey, hashApiKey } from "./api-keys.ts";
import type { CompanyEntitlements } from "./types.ts";
import { validEntitlements, validExpiry, validGraceHours, validName, validScopes } from "./validation.ts";
import { apiKeyView, companyView, keyStatus, type ApiKeyView, type CompanyView } from "./views.ts";

export interface AccountsServiceOptions {
  readonly orm: MikroORM;
  readonly apiKeyPrefix: string;
  readonly apiKeyPepper: string;
  /** Default grace of a rotated key (config.keyRotationGraceHours). */
  readonly keyRotationGraceHours: number;
  readonly clock: () => Date;
}

/** A new key. `secret` is the full key: shown to its creator once, stored nowhere. */
export interface CreatedApiKey {
  readonly key: ApiKeyView;
  readonly secret: string;
}

/** The outcome of a rotation: the successor (with its secret) and the replaced key. */
export interface RotatedApiKey extends CreatedApiKey {
  readonly previous: ApiKeyView;
}

const HOUR_MS = 3_600_000;

/**
 * Companies and their API keys (administration: AdminService, mailctl).
 * Every method works on its own EntityManager fork, and every key operation
 * takes the company id first: a key of another company is NOT_FOUND.
 */
export class AccountsService {
  readonly #options: AccountsServiceOptions;

  constructor(options: AccountsServiceOptions) {
    this.#options = options;
  }

  async createCompany(name: string, entitlements: Partial<CompanyEntitlements> = {}): Promise<CompanyView> {
    const companyName = validName("name", name);
    const ent = validEntitlements("entitlements", entitlements);
    const em = this.#em();
    const company = new CompanyRepository(em).create({
      name: companyName,
      entitlementApi: ent.api ?? true,
      entitlementSmtp: ent.smtp ?? false,
    });
    await em.flush();
    return companyView(company);
  }

  async getCompany(companyId: string): Promise<CompanyView> {
    return companyView(await requireCompany(this.#em(), companyId));
  }

  /** Operator only: every company, oldest first. */
  async listCompanies(): Promise<CompanyView[]> {
    const companies = await new CompanyRepository(this.#em()).listAll();
    return companies.map(companyView);
  }

  /** Changes the given entitlements; the others keep their value. */
  async setEntitlements(companyId: string, entitlements: Partial<CompanyEntitlements>): Promise<CompanyView> {
    const ent = validEntitlements("entitlements", entitlements);
    const em = this.#em();
    const company = await requireCompany(em, companyId);
    if (ent.api !== undefined) company.entitlementApi = ent.api;
    if (ent.smtp !== undefined) company.entitlementSmtp = ent.smtp;
    await em.flush();
    return companyView(company);
  }

  async createApiKey(companyId: string, name: string, scopes: readonly string[], expiresAt?: Date | null): Promise<CreatedApiKey> {
    const now = this.#options.clock();
    const keyName = validName("name", name);
    const keyScopes = validScopes("scopes", scopes);
    const expiry = validExpiry("expiresAt", expiresAt, now);
    const em = this.#em();
    const company = await requireCompany(em, companyId);
    const { key, secret } = this.#newKey(em, company, { name: keyName, scopes: keyScopes, expiresAt: expiry });
    await em.flush();
    return { key: apiKeyView(key, now), secret };
  }

  /**
   * Replaces an active key by a new one with the same name and scopes (and
   * no expiry of its own). The old key keeps working for `graceHours`
   * (default config.keyRotationGraceHours; 0 ends it at once), or until its
   * own expiry if that comes first; afterwards it answers API_KEY_EXPIRED.
   */
  async rotateApiKey(companyId: string, keyId: string, graceHours?: number): Promise<RotatedApiKey> {
    const grace = validGraceHours("graceHours", graceHours ?? this.#options.keyRotationGraceHours);
    return this.#em().transactional(async (em) => {
      const now = this.#options.clock();
      // Locked: two concurrent rotations of one key cannot both succeed.
      const old = await requireKey(em, companyId, keyId, { lockForUpdate: true });
      const status = keyStatus(old, now);
      if (status !== "active") {
        throw new ValidationError([{ field: "keyId", problem: `the key is ${status} and cannot be rotated` }]);
      }
      if (old.replacedBy) {
        throw new ValidationError([{ field: "keyId", problem: "the key was already rotated; rotate its successor instead" }]);
      }
      const { key, secret } = this.#newKey(em, old.company, { name: old.name, scopes: old.scopes, expiresAt: null });
      // The successor must exist before the old row points at it.
      await em.flush();
      const graceEnd = new Date(now.getTime() + grace * HOUR_MS);
      old.expiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd;
      old.replacedBy = key;
      old.replacedAt = now;
      await em.flush();
      return { key: apiKeyView(key, now), secret, previous: apiKeyView(old, now) };
    });
  }

  /** Revokes a key at once (idempotent: a revoked key keeps its first revocation time). */
  async revokeApiKey(companyId: string, keyId: string): Promise<ApiKeyView> {
    const em = this.#em();
    const key = await requireKey(em, companyId, keyId);
    const now = this.#options.clock();
    if (!key.revokedAt) {
      key.revokedAt = now;
      await em.flush();
    }
    return apiKeyView(key, now);
  }

  async getApiKey(companyId: string, keyId: string): Promise<ApiKeyView> {
    const key = await requireKey(this.#em(), companyId, keyId);
    return apiKeyView(key, this.#options.clock());
  }

  /** The key table of a company, oldest first, revoked and expired keys included. */
  async listApiKeys(companyId: string): Promise<ApiKeyView[]> {
    const em = this.#em();
    await requireCompany(em, companyId);
    const keys = await new ApiKeyRepository(em).listForCompany(companyId);
    const now = this.#options.clock();
    return keys.map((key) => apiKeyView(key, now));
  }

  /** A fresh EntityManager per operation: no identity map shared across calls. */
  #em(): EntityManager {
    return this.#options.orm.em.fork();
  }

  #newKey(
    em: EntityManager,
    company: Company,
    fields: { name: string; scopes: readonly string[]; expiresAt: Date | null },
  ): { key: ApiKey; secret: string } {
    const { fullKey, displayPrefix } = generateApiKey(this.#options.apiKeyPrefix);
    const key = new ApiKeyRepository(em).createForCompany(company, {
      ...fields,
      prefix: displayPrefix,
      secretHash: hashApiKey(this.#options.apiKeyPepper, fullKey),
    });
    return { key, secret: fullKey };
  }
}

async function requireCompany(em: EntityManager, companyId: string): Promise<Company> {
  const company = await new CompanyRepository(em).findById(companyId);
  if (!company) throw new ApiError("NOT_FOUND", "No such company.");
  return company;
}

async function requireKey(
  em: EntityManager,
  companyId: string,
  keyId: string,
  options: { lockForUpdate?: boolean } = {},
): Promise<ApiKey> {
  const key = await new ApiKeyRepository(em).findForCompany(companyId, keyId, options);
  if (!key) throw new ApiError("NOT_FOUND", "No such API key.");
  return key;
}
