import { ApiError } from "../../contract/api-error.ts";
import type { CompanyDirectory } from "./ports.ts";

/** The company's id as stored, or NOT_FOUND (an operator named a company that does not exist). */
export async function requireCompany(companies: CompanyDirectory, companyId: string): Promise<string> {
  const id = await companies.findCompanyId(companyId);
  if (id === null) throw new ApiError("NOT_FOUND", "No such company.");
  return id;
}
