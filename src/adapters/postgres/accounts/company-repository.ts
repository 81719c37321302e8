import type { EntityManager } from "@mikro-orm/postgresql";
import { CompanySchema, type Company } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

export interface NewCompany {
  readonly name: string;
  readonly entitlementApi: boolean;
  readonly entitlementSmtp: boolean;
}

/**
 * Companies are the tenants themselves: a company is read by its own id
 * (that id is the tenant boundary). `listAll` crosses tenants and is for
 * operator tooling only (AdminService, mailctl), never for an API-key caller.
 *
 * Works on the EntityManager it is given: callers pass a fork (or the EM of
 * a transaction); changes are written by the caller's flush.
 */
export class CompanyRepository {
  readonly #em: EntityManager;

  constructor(em: EntityManager) {
    this.#em = em;
  }

  async findById(companyId: string): Promise<Company | null> {
    if (!isUuid(companyId)) return null;
    return this.#em.findOne(CompanySchema, { id: companyId });
  }

  /** Operator only: every tenant. */
  async listAll(): Promise<Company[]> {
    return this.#em.find(CompanySchema, {}, { orderBy: { createdAt: "asc", id: "asc" } });
  }

  /** Persists a new company (written by the next flush). */
  create(data: NewCompany): Company {
    return this.#em.create(CompanySchema, { ...data });
  }
}
