import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type {
  AccountsStore,
  KeyAuditNote,
  ApiKeyRecord,
  ApiKeyReplacement,
  CompanyRecord,
  NewApiKey,
  NewCompany,
  ReplacedApiKey,
} from "../../../capabilities/accounts/ports.ts";
import type { CompanyEntitlements } from "../../../capabilities/accounts/types.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { CompanySchema, type ApiKey, type Company } from "../entities/index.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";
import { ApiKeyRepository } from "./api-key-repository.ts";
import { CompanyRepository } from "./company-repository.ts";

/**
 * Companies and API keys through MikroORM (simple CRUD; rotation in one
 * transaction with the key row locked). Every method works on its own
 * EntityManager fork: no identity map is shared across calls.
 */
export class PostgresAccountsStore implements AccountsStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async createCompany(company: NewCompany): Promise<CompanyRecord> {
    const em = this.#em();
    const created = new CompanyRepository(em).create({
      name: company.name,
      entitlementApi: company.entitlements.api,
      entitlementSmtp: company.entitlements.smtp,
    });
    await em.flush();
    return companyRecord(created);
  }

  async findCompany(companyId: string): Promise<CompanyRecord | null> {
    const company = await new CompanyRepository(this.#em()).findById(companyId);
    return company ? companyRecord(company) : null;
  }

  async listCompanies(): Promise<CompanyRecord[]> {
    const companies = await new CompanyRepository(this.#em()).listAll();
    return companies.map(companyRecord);
  }

  async updateEntitlements(companyId: string, entitlements: Partial<CompanyEntitlements>): Promise<CompanyRecord | null> {
    const em = this.#em();
    const company = await new CompanyRepository(em).findById(companyId);
    if (!company) return null;
    if (entitlements.api !== undefined) company.entitlementApi = entitlements.api;
    if (entitlements.smtp !== undefined) company.entitlementSmtp = entitlements.smtp;
    await em.flush();
    return companyRecord(company);
  }

  createApiKey(companyId: string, key: NewApiKey, audit: KeyAuditNote): Promise<ApiKeyRecord> {
    return this.#em().transactional(async (em) => {
      const created = new ApiKeyRepository(em).createForCompany(em.getReference(CompanySchema, companyId), key);
      await em.flush();
      audited(em, companyId, audit, created.id);
      await em.flush();
      return apiKeyRecord(created);
    });
  }

  async listApiKeys(companyId: string, after: KeysetPosition | null, limit: number): Promise<Positioned<ApiKeyRecord>[]> {
    const keys = await new ApiKeyRepository(this.#em()).listForCompany(companyId, after, limit);
    return keys.map(({ item, position }) => ({ item: apiKeyRecord(item), position }));
  }

  revokeApiKey(companyId: string, keyId: string, at: Date, audit: KeyAuditNote): Promise<ApiKeyRecord | null> {
    return this.#em().transactional(async (em) => {
      const key = await new ApiKeyRepository(em).findForCompany(companyId, keyId, { lockForUpdate: true });
      if (!key) return null;
      if (!key.revokedAt) {
        key.revokedAt = at;
        audited(em, companyId, audit, key.id);
        await em.flush();
      }
      return apiKeyRecord(key);
    });
  }

  replaceApiKey(
    companyId: string,
    keyId: string,
    plan: (current: ApiKeyRecord) => ApiKeyReplacement,
    audit: KeyAuditNote,
  ): Promise<ReplacedApiKey | null> {
    return this.#em().transactional(async (em) => {
      const keys = new ApiKeyRepository(em);
      // Locked: two concurrent rotations of one key cannot both succeed.
      const old = await keys.findForCompany(companyId, keyId, { lockForUpdate: true });
      if (!old) return null;
      const replacement = plan(apiKeyRecord(old));
      const successor = keys.createForCompany(old.company, replacement.successor);
      // The successor must exist before the old row points at it.
      await em.flush();
      old.expiresAt = replacement.previousExpiresAt;
      old.replacedBy = successor;
      old.replacedAt = replacement.replacedAt;
      audited(em, companyId, { ...audit, details: { ...audit.details, successorId: successor.id } }, old.id);
      await em.flush();
      return { successor: apiKeyRecord(successor), previous: apiKeyRecord(old) };
    });
  }

  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}

/** The change's audit row, persisted by the same flush (same transaction) as the change. */
function audited(em: EntityManager, companyId: string, audit: KeyAuditNote, keyId: string): void {
  persistAuditRow(em, companyId, { ...audit, targetType: "api_key", targetId: keyId });
}

function companyRecord(company: Company): CompanyRecord {
  return {
    id: company.id,
    name: company.name,
    entitlements: { api: company.entitlementApi, smtp: company.entitlementSmtp },
    createdAt: company.createdAt,
  };
}

function apiKeyRecord(key: ApiKey): ApiKeyRecord {
  return {
    id: key.id,
    companyId: key.company.id,
    name: key.name,
    prefix: key.prefix,
    scopes: [...key.scopes],
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? null,
    expiresAt: key.expiresAt ?? null,
    revokedAt: key.revokedAt ?? null,
    replacedById: key.replacedBy?.id ?? null,
    replacedAt: key.replacedAt ?? null,
    createdBy: key.createdBy,
  };
}
