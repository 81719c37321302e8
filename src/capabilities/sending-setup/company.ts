import type { EntityManager } from "@mikro-orm/postgresql";
import { ApiError } from "../../contract/api-error.ts";
import type { Company } from "../../adapters/postgres/entities/index.ts";
import { CompanyRepository } from "../../adapters/postgres/repositories/company-repository.ts";

/** The company itself, or NOT_FOUND (an operator named a company that does not exist). */
export async function requireCompany(em: EntityManager, companyId: string): Promise<Company> {
  const company = await new CompanyRepository(em).findById(companyId);
  if (!company) throw new ApiError("NOT_FOUND", "No such company.");
  return company;
}
